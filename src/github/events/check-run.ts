import { APPROVE_ACTION, CHECK_RUN_NAME, REJECT_ACTION } from '../check-run.js';
import { at, login, repositoryOf, sha, short, str } from './read.js';

// A button pressed on a plan's check run (src/github/check-run.ts): GitHub sends the App that made the check run a
// `check_run` webhook with action `requested_action` (https://docs.github.com/webhooks/webhook-events-and-payloads#check_run:
// "Someone requested an action your app provides to be taken. Only the GitHub App someone requests to perform an
// action will receive the requested_action payload"). Its payload: `requested_action.identifier` (the button's),
// `check_run` (its `external_id`, `head_sha`, `name`), `sender.login` (who pressed it), `repository.full_name`,
// `installation.id`. Not a trigger's event: it decides a plan, as the `/drydock approve` and `/drydock reject`
// comments do.

/** A press of Approve or Reject, as read from the payload (what it claims; the caller checks it against the plan). */
export interface ButtonPress {
  decision: 'approve' | 'reject';
  /** The check run's external_id: the id of the plan it reports. */
  planId: string;
  /** The commit the check run is on. */
  headSha: string;
  /** owner/repo of the payload's repository. */
  repository: string;
  /** Who pressed it. */
  login: string;
  /** The App that made the check run, as the payload names it (`check_run.app`): its id and client id. */
  app: { id: number | null; clientId: string | null };
}

export type ButtonReading = ButtonPress | { outcome: 'ignored'; detail: string };

/**
 * Whether the check run a press came from was made by the App drydock is (`github.app.id`, its numeric id or its
 * client id). A check run another App made may carry the same name and a plan's id as its external_id.
 */
export function madeBy(press: ButtonPress, appId: number | string | null): boolean {
  if (appId === null) return false;
  return typeof appId === 'number' ? press.app.id === appId : press.app.clientId === appId;
}

/** What a `check_run` delivery says, when it is a press of one of the plan's buttons. */
export function buttonPress(payload: unknown): ButtonReading {
  const action = str(at(payload, 'action'));
  if (action !== 'requested_action')
    return ignored(
      `check_run.${action ?? '(none)'}: only requested_action (a button of the plan's check run) is acted on`,
    );
  const name = str(at(payload, 'check_run', 'name'));
  if (name !== CHECK_RUN_NAME)
    return ignored(`a button of check run "${short(name, 100) ?? '(none)'}", not of "${CHECK_RUN_NAME}"`);
  const identifier = str(at(payload, 'requested_action', 'identifier'));
  const decision = identifier === APPROVE_ACTION ? 'approve' : identifier === REJECT_ACTION ? 'reject' : null;
  if (!decision) return ignored(`unknown button "${short(identifier, 40) ?? '(none)'}"`);
  const planId = str(at(payload, 'check_run', 'external_id'));
  const headSha = sha(at(payload, 'check_run', 'head_sha'));
  const repository = repositoryOf(payload);
  const who = login(at(payload, 'sender', 'login'));
  if (!planId || !/^[\w-]{1,100}$/.test(planId) || !headSha || !repository || !who)
    return ignored('the check run payload lacks its external_id, head_sha, repository or sender');
  const appId = at(payload, 'check_run', 'app', 'id');
  const app = {
    id: typeof appId === 'number' && Number.isSafeInteger(appId) ? appId : null,
    clientId: str(at(payload, 'check_run', 'app', 'client_id')) ?? null,
  };
  return { decision, planId, headSha, repository, login: who, app };
}

function ignored(detail: string): ButtonReading {
  return { outcome: 'ignored', detail };
}
