import { dataOf, type RunEventMap } from '../domain/events.js';
import { clipText } from '../domain/plan-title.js';
import type { LoggedEvent, PullRequestCheckout } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { Reaction } from '../reactions/reactions.js';
import type { PlanStore, RunStore } from '../store/store.js';
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

/**
 * Reports plans back to the pull request they are about: each proposed plan as a comment (split to fit
 * GitHub's limit) and a `drydock/plan` commit status on the head commit that follows the plan's decisions.
 *
 * A reaction (src/reactions/): it reads `plan_proposed` and `plan_decided` from the stored event log after
 * its own cursor, so a crash loses no report, and the reports go out in the order of the events. Each event
 * may be handed over more than once; the effects are idempotent: every comment part carries a hidden marker
 * (`partMarker`) and the pull request's comments are read before posting, so a part GitHub already has is
 * not posted again (only comments by drydock's own account count: anyone can write a marker); a status is set again to the same state, in event order. A failure GitHub answers for
 * good (401, 404, 422) is logged (never with the token) and the report goes on without that step; any other
 * failure is thrown, and the event is tried again after a backoff.
 */
export class GithubReporter implements Reaction {
  readonly name = 'github_report';
  readonly types = ['plan_proposed', 'plan_decided'] as const;

  constructor(private readonly deps: { github: GithubApi; store: PlanStore & RunStore; logger: Logger }) {}

  async react(event: LoggedEvent): Promise<void> {
    const pr = await pullRequestOf(this.deps.store, await this.deps.store.getRun(event.runId));
    if (!pr) return;
    const proposed = dataOf(event, 'plan_proposed');
    if (proposed?.plan_id) await this.proposed(proposed, pr);
    const decided = dataOf(event, 'plan_decided');
    if (decided?.plan_id) await this.decided(decided, pr);
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
    const page = `/ui/plans/${planId}`;
    await this.status(planId, pr, 'pending', `Plan ${planId} (round ${round}) awaits approval at ${page}`);
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
