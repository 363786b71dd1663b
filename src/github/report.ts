import { dataOf, type RunEventMap } from '../domain/events.js';
import { clipText } from '../domain/plan-title.js';
import type { LoggedEvent, PlanStatus, PullRequestCheckout } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { Reaction } from '../reactions/reactions.js';
import type { PlanStore, RunStore } from '../store/store.js';
import { CHECK_RUN_NAME, planCheckRun } from './check-run.js';
import { type CommitState, type GithubApi, GithubCallError } from './client.js';
import { commentParts } from './comment-split.js';
import { pullRequestOf } from './target.js';

/** The commit status context drydock sets on a pull request's head. */
export const STATUS_CONTEXT = 'drydock/plan';
/** GitHub refuses a commit status description of 140 characters or more. */
const DESCRIPTION_MAX = 139;

/** One line, at most `max` characters: commit status descriptions are short and single-line. */
function clip(text: string, max = DESCRIPTION_MAX): string {
  return clipText(text.replace(/\s+/g, ' ').trim(), max, '…');
}

/** The hidden line that names a plan comment's part: how a report retried after a crash finds it posted. */
export function partMarker(planId: string, part: number): string {
  return `<!-- drydock:plan ${planId} part ${part} -->`;
}

/**
 * Whether GitHub's refusal is for good: a 4xx other than a timeout or a rate limit (the client has retried
 * those as long as GitHub asked). Anything else (5xx, no answer, drydock stopping) is tried again later.
 */
function refusedForGood(err: unknown): boolean {
  if (!(err instanceof GithubCallError) || err.status === null) return false;
  return err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429;
}

/** The last event of a run (runs/events.ts RUN_FINISHED, a unit drydock's GitHub room does not import). */
const RUN_FINISHED = 'run_finished';

export interface GithubReporterDeps {
  github: GithubApi;
  store: PlanStore & RunStore;
  logger: Logger;
  /**
   * Report each plan's state as a check run ("drydock plan", check-run.ts) instead of the commit status: GitHub
   * lets only an App write check runs, so this is on when drydock acts as a GitHub App (github.app).
   */
  checkRuns?: boolean;
  /** A plan's page for people: absolute under server.public_url (then also the check run's details_url). */
  planPage?: (planId: string) => { page: string; isUrl: boolean };
}

/**
 * Reports plans back to the pull request they are about: each proposed plan as a comment (split to fit
 * GitHub's limit), and the plan's state: with a token, a `drydock/plan` commit status on the head commit that
 * follows the plan's decisions; as a GitHub App, a check run named "drydock plan" on that commit (check-run.ts)
 * carrying Approve and Reject buttons while the plan waits, then what became of it.
 *
 * A reaction (src/reactions/): it reads `plan_proposed`, `plan_decided` and, for check runs, `plan_closed` and
 * the end of an execute run (`run_finished`) from the stored event log after its own cursor, so a crash loses
 * no report, and the reports go out in the order of the events. Each event may be handed over more than once;
 * the effects are idempotent: every comment part carries a hidden marker (`partMarker`) and the pull request's
 * comments are read before posting, so a part GitHub already has is not posted again (only comments by
 * drydock's own account count: anyone can write a marker); a status is set again to the same state, in event
 * order; a check run is looked up first among the commit's check runs of that name by its `external_id`, the
 * plan's id (only the App's own count: only it can update them), and updated, so each plan has one, written
 * from the plan's state as the store has it now. A failure GitHub answers for good (401, 403, 404, 422) is
 * logged (never with the token) and the report goes on without that step; any other failure is thrown, and the
 * event is tried again after a backoff.
 */
export class GithubReporter implements Reaction {
  readonly name = 'github_report';
  readonly types = ['plan_proposed', 'plan_decided', 'plan_closed', RUN_FINISHED] as const;

  constructor(private readonly deps: GithubReporterDeps) {}

  async react(event: LoggedEvent): Promise<void> {
    if (event.type === RUN_FINISHED) return this.executionEnded(event);
    const pr = await pullRequestOf(this.deps.store, await this.deps.store.getRun(event.runId));
    if (!pr) return;
    const proposed = dataOf(event, 'plan_proposed');
    if (proposed?.plan_id) await this.proposed(proposed, pr);
    const decided = dataOf(event, 'plan_decided');
    if (decided?.plan_id) {
      if (this.deps.checkRuns) await this.checkRun(decided.plan_id, pr);
      else await this.decided(decided, pr);
    }
    // Superseded or expired: the check run says so (a token's commit status keeps what it said last).
    const closed = dataOf(event, 'plan_closed');
    if (closed?.plan_id && this.deps.checkRuns) await this.checkRun(closed.plan_id, pr);
  }

  /**
   * An execute run ended: its plan's check run says whether it was carried out. A plan the run left approved
   * or executing is settled as failed by the plan_settling reaction, which may come after this one: it is shown
   * failed already.
   */
  private async executionEnded(event: LoggedEvent): Promise<void> {
    if (!this.deps.checkRuns) return;
    const { store } = this.deps;
    const run = await store.getRun(event.runId);
    if (!run?.executesPlanId) return;
    const plan = await store.getPlan(run.executesPlanId);
    if (!plan) return;
    const pr = await pullRequestOf(store, await store.getRun(plan.runId));
    if (!pr) return;
    const unsettled = plan.status === 'approved' || plan.status === 'executing';
    await this.checkRun(plan.id, pr, unsettled ? 'execution_failed' : undefined);
  }

  private async proposed(data: RunEventMap['plan_proposed'], pr: PullRequestCheckout): Promise<void> {
    const { plan_id: planId, round } = data;
    try {
      await this.comment(data, pr);
    } catch (err) {
      if (!refusedForGood(err)) throw err;
      this.deps.logger.error(
        { plan_id: planId, github: String((err as Error).message) },
        'posting the plan to the pull request failed',
      );
    }
    if (this.deps.checkRuns) return this.checkRun(planId, pr);
    const page = `/ui/plans/${planId}`;
    await this.status(planId, pr, 'pending', `Plan ${planId} (round ${round}) awaits approval at ${page}`);
  }

  /**
   * Creates or updates the plan's check run on the commit it was made against, from the plan as the store has
   * it now (`status` shown instead of its own when given). The commit's check runs named "drydock plan" are read
   * first: the one whose external_id is the plan's id and that this App made is updated, so a report handed
   * over again after a crash (GitHub took the check run, drydock died before it heard) finds it.
   */
  private async checkRun(planId: string, pr: PullRequestCheckout, status?: PlanStatus): Promise<void> {
    const { github, store, logger } = this.deps;
    const plan = await store.getPlan(planId);
    if (!plan) return;
    const { page, isUrl } = this.deps.planPage?.(planId) ?? { page: `/ui/plans/${planId}`, isUrl: false };
    const fields = planCheckRun({
      plan,
      decisions: await store.listDecisions(planId),
      headSha: pr.headSha,
      page,
      pageIsUrl: isUrl,
      ...(status ? { status } : {}),
    });
    try {
      // The App's bot is `<slug>[bot]`; a check run lists the slug of the App that made it.
      const slug = (await github.authenticatedLogin(pr.repository)).replace(/\[bot\]$/, '');
      const ours = (await github.listCheckRuns(pr.repository, pr.headSha, CHECK_RUN_NAME)).find(
        (r) => r.externalId === planId && r.appSlug === slug,
      );
      if (ours) await github.updateCheckRun(pr.repository, ours.id, fields);
      else
        await github.createCheckRun(pr.repository, {
          name: CHECK_RUN_NAME,
          sha: pr.headSha,
          externalId: planId,
          ...fields,
        });
      logger.debug(
        { plan_id: planId, conclusion: fields.conclusion, check_run: ours?.id ?? 'new' },
        'plan check run reported',
      );
    } catch (err) {
      if (!refusedForGood(err)) throw err;
      logger.error(
        { plan_id: planId, github: String((err as Error).message) },
        'reporting the plan check run failed',
      );
    }
  }

  /** Posts the parts of the plan's comment GitHub does not have yet, in order. */
  private async comment(data: RunEventMap['plan_proposed'], pr: PullRequestCheckout): Promise<void> {
    const { github, logger } = this.deps;
    const { plan_id: planId, markdown, sha256, round, previous_plan_id: previous } = data;
    const page = `/ui/plans/${planId}`;
    const header = [
      `### drydock plan \`${planId}\` (round ${round})`,
      '',
      `Plan sha256 \`${sha256.slice(0, 12)}\`, made against \`${pr.headSha.slice(0, 12)}\`` +
        (previous ? `, revising \`${previous}\`.` : '.'),
      '',
      `Nothing runs until it is approved. Decide on the drydock web page \`${page}\`, or comment ` +
        '`/drydock approve` or `/drydock reject <reason>` on this pull request.',
    ].join('\n');
    const bodies = commentParts({
      header,
      markdown,
      planId,
      fullPlanAt: `\`${page}\` (or \`GET /v1/plans/${planId}\`)`,
    }).map((body, i) => `${body}\n\n${partMarker(planId, i + 1)}`);
    // Read before writing: a report handed over again after a crash finds the parts GitHub accepted. Only
    // drydock's own comments count: anyone may write a marker into a comment of theirs.
    const existing = await github.ownComments(pr.repository, pr.number);
    let posted = 0;
    for (const [i, body] of bodies.entries()) {
      const marker = partMarker(planId, i + 1);
      if (existing.some((c) => c.body.includes(marker))) continue;
      // A failure stops here (later parts without this one would read wrong); the retry posts from it on.
      await github.createComment(pr.repository, pr.number, body);
      posted += 1;
    }
    if (posted > 0) {
      logger.info(
        { plan_id: planId, pull_request: `${pr.repository}#${pr.number}`, parts: bodies.length, posted },
        'plan posted to the pull request',
      );
    }
  }

  private async decided(data: RunEventMap['plan_decided'], pr: PullRequestCheckout): Promise<void> {
    const { plan_id: planId, comment } = data;
    const who = data.identity ?? 'someone';
    switch (data.plan_status) {
      case 'approved':
        return this.status(planId, pr, 'success', `Plan ${planId} approved by ${who}`);
      case 'rejected':
        return this.status(
          planId,
          pr,
          'failure',
          `Plan ${planId} rejected by ${who}${comment ? `: ${comment}` : ''}`,
        );
      case 'revision_requested':
        return this.status(planId, pr, 'pending', `Revision of plan ${planId} requested by ${who}`);
      case 'superseded':
        return this.status(planId, pr, 'pending', `Plan ${planId} superseded by new commits`);
      default:
        // pending_approval: an approval that has not reached the quorum yet changes nothing on GitHub.
        return;
    }
  }

  private async status(
    planId: string,
    pr: PullRequestCheckout,
    state: CommitState,
    description: string,
  ): Promise<void> {
    try {
      await this.deps.github.createStatus(pr.repository, pr.headSha, {
        state,
        context: STATUS_CONTEXT,
        description: clip(description),
      });
    } catch (err) {
      if (!refusedForGood(err)) throw err;
      this.deps.logger.error(
        { plan_id: planId, state, github: String((err as Error).message) },
        'setting the pull request status failed',
      );
    }
  }
}
