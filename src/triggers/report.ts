import { dataOf, type RunEventMap } from '../domain/events.js';
import { clipText } from '../domain/plan-title.js';
import type { RunCheckout, RunEvent } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { PlanStore, RunStore } from '../store/store.js';
import { commentParts } from './comment-split.js';
import type { CommitState, GithubApi } from './github-api.js';

/** The commit status context drydock sets on a pull request's head. */
export const STATUS_CONTEXT = 'drydock/plan';
/** GitHub refuses a commit status description of 140 characters or more. */
const DESCRIPTION_MAX = 139;
/** Reports waiting (all pull requests together); beyond it new ones are dropped, with a warning. */
const MAX_QUEUED = 500;
/** Plans already commented on, remembered so a re-emitted plan_proposed does not comment twice. */
const REMEMBERED_PLANS = 10_000;
/** A revision round's run has no checkout of its own: follow revisesPlanId back this far to find the PR. */
const MAX_REVISION_HOPS = 50;

interface Target {
  /** owner/repo#number: reports about one pull request go out in event order. */
  key: string;
  checkout: RunCheckout;
}

/** One line, at most `max` characters: commit status descriptions are short and single-line. */
function clip(text: string, max = DESCRIPTION_MAX): string {
  return clipText(text.replace(/\s+/g, ' ').trim(), max, '…');
}

/**
 * Reports plans back to the pull request they are about: each proposed plan as a comment (split to fit
 * GitHub's limit) and a `drydock/plan` commit status on the head commit that follows the plan's decisions.
 *
 * It listens to every run event (`RunEvents.subscribeAll`) and never slows or breaks a run or a decision:
 * the listener only queues work. Reports about one pull request go out one after another, in the order of
 * the events; a failure is logged (never with the token) and the next report goes on.
 */
export class GithubReporter {
  private routing: Promise<void> = Promise.resolve();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly commented = new Set<string>();
  private queued = 0;
  private closing = false;

  constructor(private readonly deps: { github: GithubApi; store: PlanStore & RunStore; logger: Logger }) {}

  /** The run event listener. Never throws. */
  readonly onEvent = (event: RunEvent): void => {
    if (this.closing || (event.type !== 'plan_proposed' && event.type !== 'plan_decided')) return;
    if (this.queued >= MAX_QUEUED) {
      this.deps.logger.warn(
        { run_id: event.runId, event: event.type },
        'GitHub report dropped: too many queued',
      );
      return;
    }
    this.queued += 1;
    // Finding the pull request reads the store; doing it in one chain keeps the events in order when
    // their reports are handed to the pull request's own chain.
    this.routing = this.routing
      .then(() => this.route(event))
      .catch((err: unknown) => {
        this.queued -= 1;
        this.deps.logger.error({ run_id: event.runId, err: String(err) }, 'GitHub report failed');
      });
  };

  /** Stops taking events and waits (at most `graceMs`) for queued reports; calls still out are abandoned. */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const idle = (async () => {
      await this.routing;
      while (this.chains.size) await Promise.all([...this.chains.values()]);
    })();
    await Promise.race([idle, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.deps.github.close();
  }

  private async route(event: RunEvent): Promise<void> {
    const target = await this.targetOf(event.runId);
    if (!target) {
      this.queued -= 1;
      return;
    }
    const previous = this.chains.get(target.key) ?? Promise.resolve();
    const next = previous
      .then(() => this.report(event, target))
      .catch((err: unknown) => {
        this.deps.logger.error(
          { run_id: event.runId, event: event.type, pull_request: target.key, err: String(err) },
          'GitHub report failed',
        );
      })
      .finally(() => {
        this.queued -= 1;
        if (this.chains.get(target.key) === next) this.chains.delete(target.key);
      });
    this.chains.set(target.key, next);
  }

  /** The pull request a run is about: its own checkout, or the one of the plan a revision round revises. */
  private async targetOf(runId: string): Promise<Target | null> {
    const { store } = this.deps;
    let run = await store.getRun(runId);
    for (let hop = 0; run && hop < MAX_REVISION_HOPS; hop++) {
      if (run.checkout) {
        return { key: `${run.checkout.repository}#${run.checkout.number}`, checkout: run.checkout };
      }
      if (!run.revisesPlanId) return null;
      const plan = await store.getPlan(run.revisesPlanId);
      run = plan ? await store.getRun(plan.runId) : null;
    }
    return null;
  }

  private async report(event: RunEvent, target: Target): Promise<void> {
    const proposed = dataOf(event, 'plan_proposed');
    if (proposed?.plan_id) await this.proposed(proposed, target.checkout);
    const decided = dataOf(event, 'plan_decided');
    if (decided?.plan_id) await this.decided(decided, target.checkout);
  }

  private async proposed(data: RunEventMap['plan_proposed'], pr: RunCheckout): Promise<void> {
    const { github, logger } = this.deps;
    const { plan_id: planId, markdown, sha256, round, previous_plan_id: previous } = data;
    const page = `/ui/plans/${planId}`;

    if (!this.commented.has(planId)) {
      this.remember(planId);
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
      });
      let posted = 0;
      for (const body of bodies) {
        try {
          await github.createComment(pr.repository, pr.number, body);
          posted += 1;
        } catch (err) {
          logger.error(
            {
              plan_id: planId,
              part: posted + 1,
              parts: bodies.length,
              github: String((err as Error).message),
            },
            'posting the plan to the pull request failed',
          );
          break; // later parts without this one would read wrong
        }
      }
      if (posted === bodies.length) {
        logger.info(
          { plan_id: planId, pull_request: `${pr.repository}#${pr.number}`, parts: posted },
          'plan posted to the pull request',
        );
      }
    }
    await this.status(planId, pr, 'pending', `Plan ${planId} (round ${round}) awaits approval at ${page}`);
  }

  private async decided(data: RunEventMap['plan_decided'], pr: RunCheckout): Promise<void> {
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
    pr: RunCheckout,
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
      this.deps.logger.error(
        { plan_id: planId, state, github: String((err as Error).message) },
        'setting the pull request status failed',
      );
    }
  }

  private remember(planId: string): void {
    this.commented.add(planId);
    if (this.commented.size > REMEMBERED_PLANS) {
      const oldest = this.commented.values().next().value;
      if (oldest !== undefined) this.commented.delete(oldest);
    }
  }
}
