import type { Decision, Plan, PlanStatus } from '../domain/types.js';
import type { CheckRunAction, CheckRunConclusion, CheckRunFields } from './client.js';

// What a plan's check run says on GitHub, as a pure function of the plan. Used when drydock acts as a GitHub
// App (only Apps may write check runs); a token setup keeps the `drydock/plan` commit status (report.ts).
//
// Facts from GitHub's documentation this relies on:
// - Create and update (https://docs.github.com/rest/checks/runs#create-a-check-run,
//   https://docs.github.com/rest/checks/runs#update-a-check-run): `name` and `head_sha` required; `status` queued,
//   in_progress or completed; `conclusion` "Required if you provide completed_at or a status of completed", one of
//   action_required, cancelled, failure, neutral, success, skipped, timed_out (stale is GitHub's own);
//   `external_id` "A reference for the run on the integrator's system"; `details_url` the integrator's page;
//   `output.title` and `output.summary` (Markdown, "Maximum length: 65535 characters"); `actions`: "A maximum of
//   three actions are accepted", each with a `label` (at most 20 characters), a `description` (at most 40) and an
//   `identifier` (at most 20). Writing check runs is for GitHub Apps only ("OAuth apps and authenticated users
//   can view check runs and check suites, but they are not able to create them").
// - The buttons (https://docs.github.com/rest/guides/using-the-rest-api-to-interact-with-checks#check-runs-and-requested-actions):
//   "The button appears after the check run completes"; a click sends the App the `check_run` webhook with action
//   `requested_action` and `requested_action.identifier`. So a plan that waits for a decision is a check run
//   `completed` with conclusion `action_required`, the buttons on it.
// - The summary's limit is counted in bytes, not characters: GitHub answers 422 "summary exceeds a maximum
//   bytesize of 65535" (https://github.com/github/docs/issues/35252). The summary is clipped to 65535 UTF-8 bytes.
// - A completed check run does not go back to in_progress: GitHub accepts the update and leaves the status
//   completed ("Once a check run transitions from the in_progress state to completed state, it's not possible
//   to modify its status", https://github.com/orgs/community/discussions/24761, as quoted in
//   https://github.com/taskcluster/taskcluster/issues/5085; also https://github.com/Mergifyio/mergify/pull/1989,
//   https://github.com/tektoncd/pipelines-as-code/issues/998). Its conclusion can still be changed, which
//   Atlantis relies on to turn a failed check green after approval (lyft/atlantis#693). So the check run of an
//   approved plan being carried out stays completed, with the conclusion `neutral`, rather than in_progress.
//
// The conclusion of each state, and why:
// - pending_approval: action_required, with Approve and Reject: a person has to act, and the buttons show only on a
//   completed check run.
// - approved, executing: neutral ("Approved by …; being carried out"): no longer waiting on anyone, not done
//   yet, and it cannot be in_progress (above). GitHub counts neutral as passing for a required check: a person
//   approved the plan.
// - executed: success. execution_failed: failure (what was approved did not happen).
// - rejected: failure, as the `drydock/plan` commit status has always said of a rejected plan.
// - revision_requested, superseded: cancelled: the plan was withdrawn, neither passed nor failed; a revision's
//   next round has a check run of its own, new commits get new plans on their own head.
// - expired: timed_out: nobody decided before the plan's expiry, GitHub's own word for a check that ran out of time.

/** The name of every plan's check run (what the list is filtered by, and what a pull request shows). */
export const CHECK_RUN_NAME = 'drydock plan';

/** The identifiers the buttons send back in `requested_action.identifier`. */
export const APPROVE_ACTION = 'approve';
export const REJECT_ACTION = 'reject';

/** GitHub's limits on a check run's buttons. */
export const ACTION_LIMITS = { count: 3, label: 20, description: 40, identifier: 20 } as const;
/** GitHub's limit on output.summary, in UTF-8 bytes. */
export const SUMMARY_MAX_BYTES = 65_535;

/** The buttons of a plan waiting for a decision. */
export const PLAN_ACTIONS: readonly CheckRunAction[] = [
  { label: 'Approve', description: 'Approve the plan: drydock carries it out', identifier: APPROVE_ACTION },
  { label: 'Reject', description: 'Reject the plan: nothing is changed', identifier: REJECT_ACTION },
];

/** What the check run of a plan is made from. */
export interface PlanCheckInput {
  plan: Pick<
    Plan,
    | 'id'
    | 'status'
    | 'markdown'
    | 'sha256'
    | 'round'
    | 'approvalsRequired'
    | 'failureReason'
    | 'previousPlanId'
  >;
  /** The plan's decisions, oldest first (who approved or rejected it, and why). */
  decisions: readonly Pick<Decision, 'kind' | 'identity' | 'comment'>[];
  /** The commit the plan was made against (the pull request's head). */
  headSha: string;
  /** The plan's page: absolute under server.public_url, else its path (not sent as details_url then). */
  page: string;
  /** Whether `page` is an absolute URL GitHub can link to (details_url). */
  pageIsUrl: boolean;
  /** The status to show instead of the plan's own: an execute run that ended without a result is a failure. */
  status?: PlanStatus;
}

const CONCLUSION: Record<PlanStatus, CheckRunConclusion> = {
  pending_approval: 'action_required',
  approved: 'neutral',
  executing: 'neutral',
  executed: 'success',
  execution_failed: 'failure',
  rejected: 'failure',
  revision_requested: 'cancelled',
  superseded: 'cancelled',
  expired: 'timed_out',
};

/** The check run of a plan in its current state: always completed (see above), buttons only while it waits. */
export function planCheckRun(input: PlanCheckInput): CheckRunFields {
  const status = input.status ?? input.plan.status;
  const waiting = status === 'pending_approval';
  const summary = clipBytes(
    `${lead(input, status)}\n\n---\n\n${input.plan.markdown}`,
    SUMMARY_MAX_BYTES,
    `\n\n… (the plan goes on; read it whole at ${input.page})`,
  );
  return {
    status: 'completed',
    conclusion: CONCLUSION[status],
    ...(input.pageIsUrl ? { detailsUrl: input.page } : {}),
    output: { title: titleOf(input, status), summary },
    // An empty list takes the buttons away once the plan no longer waits.
    actions: waiting ? [...PLAN_ACTIONS] : [],
  };
}

/** The last decision of `kind`, if any. */
function last(input: PlanCheckInput, kind: Decision['kind']) {
  return [...input.decisions].reverse().find((d) => d.kind === kind);
}

function titleOf(input: PlanCheckInput, status: PlanStatus): string {
  const approvers = [...new Set(input.decisions.filter((d) => d.kind === 'approve').map((d) => d.identity))];
  switch (status) {
    case 'pending_approval':
      return approvers.length
        ? `Awaits approval (${approvers.length} of ${input.plan.approvalsRequired})`
        : 'Awaits approval';
    case 'approved':
    case 'executing':
      return `Approved by ${approvers.join(', ') || 'an approver'}; being carried out`;
    case 'executed':
      return `Carried out (approved by ${approvers.join(', ') || 'an approver'})`;
    case 'execution_failed':
      return 'Approved, but carrying it out failed';
    case 'rejected':
      return `Rejected by ${last(input, 'reject')?.identity ?? 'an approver'}`;
    case 'revision_requested':
      return `Revision requested by ${last(input, 'revise')?.identity ?? 'an approver'}`;
    case 'superseded':
      return 'Superseded: the pull request moved on';
    case 'expired':
      return 'Expired: nobody decided in time';
  }
}

/** The lines above the plan: what it is, and what a reader can do now. */
function lead(input: PlanCheckInput, status: PlanStatus): string {
  const { plan, headSha, page } = input;
  const about =
    `Plan \`${plan.id}\` (round ${plan.round}), sha256 \`${plan.sha256.slice(0, 12)}\`, made against ` +
    `\`${headSha.slice(0, 12)}\`${plan.previousPlanId ? `, revising \`${plan.previousPlanId}\`` : ''}.`;
  const reason = (text: string | null | undefined) =>
    text ? `: ${oneLine(text).replace(/\.+$/, '')}.` : '.';
  switch (status) {
    case 'pending_approval':
      return [
        about,
        '',
        'Nothing runs until it is approved. Press **Approve** or **Reject** above (only GitHub users drydock maps ' +
          'to an approver count), comment `/drydock approve` or `/drydock reject <reason>` on the pull request, ' +
          `or decide on drydock's page ${page}.`,
      ].join('\n');
    case 'execution_failed':
      return `${about}\n\nIt was approved, but carrying it out failed${reason(plan.failureReason)}`;
    case 'rejected':
      return `${about}\n\nRejected${reason(last(input, 'reject')?.comment)}`;
    case 'revision_requested':
      return (
        `${about}\n\nA revision was asked for${reason(last(input, 'revise')?.comment)} ` +
        'The next round has a check run of its own.'
      );
    default:
      return `${about}\n\nMore on drydock's page ${page}.`;
  }
}

/** One line of at most 300 characters: a reason shown beside a title. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

/**
 * `text` cut to at most `max` UTF-8 bytes, `mark` ending it when cut; never splits a character (a lone half of
 * a surrogate pair would be sent as U+FFFD).
 */
export function clipBytes(text: string, max: number, mark: string): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  const room = max - Buffer.byteLength(mark, 'utf8');
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > room) break;
    used += size;
    end += ch.length;
  }
  return text.slice(0, end) + mark;
}
