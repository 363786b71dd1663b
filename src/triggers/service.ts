import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { DecisionError, type PlanDecisions } from '../plans/decisions.js';
import type { RunQueue } from '../runs/queue.js';
import type { RunService } from '../runs/service.js';
import type { Store } from '../store/store.js';
import type { Delivery, DeliveryOutcome, Run, Trigger } from '../store/types.js';
import { parseCommand } from './commands.js';
import { at, type PullRequestContext, prSubject, pullRequestContext } from './context.js';
import { mismatch } from './match.js';
import { renderPrompt } from './template.js';

export interface WebhookAnswer {
  status: 200 | 202;
  body: Record<string, unknown>;
}

/** Reads a pull request when a comment command needs it (the comment payload lacks the head commit). */
export type PullRequestLookup = (repository: string, number: number) => Promise<unknown | null>;

interface Deps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  queue: RunQueue;
  runs: RunService;
  plans: PlanDecisions;
  lookupPullRequest?: PullRequestLookup;
}

/**
 * Remote triggers: routes each verified GitHub delivery (and each generic fire) to the triggers it matches,
 * records what became of it, and queues the runs. Nothing slow happens here: the pull request checkout is
 * prepared when the run starts, so a webhook is answered at once.
 */
export class TriggerService {
  constructor(private readonly deps: Deps) {}

  async handleGithub(event: string, deliveryId: string, payload: unknown): Promise<WebhookAnswer> {
    const { store, clock } = this.deps;
    const rawAction = at(payload, 'action');
    const action = typeof rawAction === 'string' ? `.${rawAction}` : '';
    const recorded = await store.recordDelivery({
      id: newId('dlv'),
      source: 'github',
      key: deliveryId,
      event: `${event}${action}`,
      triggerId: null,
      outcome: 'accepted',
      detail: null,
      subject: null,
      runIds: [],
      receivedAt: clock.now(),
    });
    if (recorded.duplicate && !abandoned(recorded.delivery, clock.now())) {
      return {
        status: 200,
        body: {
          duplicate: true,
          delivery_id: recorded.delivery.id,
          outcome: recorded.delivery.outcome,
          run_ids: recorded.delivery.runIds,
        },
      };
    }
    // A delivery recorded but never settled by a process that died is processed again on redelivery;
    // trigger fires are idempotent per (trigger, delivery), so no run is started twice.
    const delivery = recorded.delivery;
    const settle = async (
      outcome: DeliveryOutcome,
      detail: string | null,
      runIds: string[] = [],
      subject?: string,
    ) => {
      await store.updateDelivery(delivery.id, { outcome, detail, runIds, ...(subject ? { subject } : {}) });
      return { status: 202 as const, body: { delivery_id: delivery.id, outcome, detail, run_ids: runIds } };
    };

    try {
      return await this.route(event, payload, delivery, settle);
    } catch (err) {
      // Not recorded as handled: GitHub's redelivery of this id must be processed, not deduplicated.
      await store.deleteDelivery(delivery.id).catch(() => undefined);
      throw err;
    }
  }

  private async route(
    event: string,
    payload: unknown,
    delivery: Delivery,
    settle: (
      o: DeliveryOutcome,
      d: string | null,
      runs?: string[],
      subject?: string,
    ) => Promise<WebhookAnswer>,
  ): Promise<WebhookAnswer> {
    const { store } = this.deps;
    if (event === 'ping') {
      await store.updateDelivery(delivery.id, { outcome: 'ignored', detail: 'ping' });
      return { status: 200, body: { pong: true, delivery_id: delivery.id } };
    }
    if (event === 'pull_request') {
      const ctx = pullRequestContext(event, payload);
      if (!ctx) return settle('rejected', 'the pull_request payload lacks required fields');
      return this.pullRequest(delivery, ctx, settle);
    }
    if (event === 'issue_comment') return this.comment(delivery, payload, settle);
    return settle('ignored', `no trigger handles ${event} events`);
  }

  private async pullRequest(
    delivery: Delivery,
    ctx: PullRequestContext,
    settle: (
      o: DeliveryOutcome,
      d: string | null,
      runs?: string[],
      subject?: string,
    ) => Promise<WebhookAnswer>,
  ): Promise<WebhookAnswer> {
    const subject = prSubject(ctx.repository, ctx.number);
    const action = ctx.event.split('.')[1];
    let superseded: string[] = [];
    if (action === 'synchronize' || action === 'closed') {
      // New commits (or a closed PR): plans made against the old head are no longer what would be merged.
      superseded = await this.supersede(subject);
    }
    const result = await this.fireMatching(delivery, ctx);
    const detail = [result.detail, superseded.length ? `superseded ${superseded.join(', ')}` : null]
      .filter(Boolean)
      .join('; ');
    return settle(result.outcome, detail || null, result.runIds, subject);
  }

  private async supersede(subject: string): Promise<string[]> {
    const { store } = this.deps;
    const ids = await store.supersedePlans(subject);
    // Plan runs still exploring the old head would only propose stale plans.
    for (const run of await store.activeRunsForSubject(subject)) {
      if (run.phase === 'plan') await this.deps.runs.cancel(run.id);
    }
    return ids;
  }

  /** Fires every enabled github trigger the pull request event matches. */
  private async fireMatching(
    delivery: Delivery,
    ctx: PullRequestContext,
    ignoreEvent = false,
  ): Promise<{ outcome: DeliveryOutcome; detail: string | null; runIds: string[] }> {
    const { store, clock, config } = this.deps;
    const triggers = await store.listTriggers({ kind: 'github', enabled: true });
    const runIds: string[] = [];
    const reasons: string[] = [];
    let capped = 0;
    let matched = 0;
    for (const trigger of triggers) {
      const why = mismatch(ignoreEvent ? { ...trigger, events: [ctx.event] } : trigger, ctx);
      if (why) {
        await store.recordTriggerFire(trigger.id, delivery.id, 'filtered', clock.now());
        reasons.push(`${trigger.name}: ${why}`);
        continue;
      }
      matched += 1;
      const clone = config.github.repositories[ctx.repository]?.path;
      if (!clone) {
        reasons.push(
          `${trigger.name}: no local clone configured for ${ctx.repository} (github.repositories)`,
        );
        continue;
      }
      const fired = await this.start(trigger, delivery.id, ctx, clone);
      if (fired.outcome === 'capped') {
        capped += 1;
        reasons.push(`${trigger.name}: hourly cap of ${trigger.hourlyCap} reached`);
      } else if (fired.run) {
        runIds.push(fired.run.id);
      }
    }
    const outcome: DeliveryOutcome = runIds.length
      ? 'accepted'
      : capped
        ? 'capped'
        : matched
          ? 'rejected'
          : 'filtered';
    return { outcome, detail: reasons.length ? reasons.join('; ') : null, runIds };
  }

  private async start(
    trigger: Trigger,
    deliveryId: string,
    ctx: PullRequestContext,
    clone: string,
  ): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }> {
    const { store, clock } = this.deps;
    const subject = prSubject(ctx.repository, ctx.number);
    const requester = this.identityOf(ctx.author);
    const now = clock.now();
    const result = await store.fireTrigger({
      triggerId: trigger.id,
      deliveryId,
      hourlyCap: trigger.hourlyCap,
      now,
      session: {
        name: `${trigger.name}: ${subject}`,
        workspace: clone,
        owner: requester,
        defaults: {},
        scopeKey: `trigger:${trigger.id}:${subject}`,
      },
      run: {
        id: newId('run'),
        jobId: null,
        slotAt: null,
        source: 'delivery',
        prompt: renderPrompt(trigger.prompt, ctx, trigger.name),
        requestedBy: requester,
        createdAt: now,
        overrides: trigger.options,
        triggerId: trigger.id,
        deliveryId,
        subject,
        checkout: {
          repository: ctx.repository,
          clone,
          headSha: ctx.headSha,
          headRef: ctx.headRef,
          baseRef: ctx.baseRef,
          number: ctx.number,
        },
      },
    });
    if (result.run) this.deps.queue.submit(result.run);
    return result;
  }

  /** GitHub logins act as the drydock identity config maps them to; others are `github:<login>`. */
  private identityOf(login: string): string {
    return this.mapped(login) ?? `github:${login}`;
  }

  /** The identity config maps a GitHub login to (own keys only: "constructor" is no one). */
  private mapped(login: string): string | undefined {
    const users = this.deps.config.github.users;
    return Object.hasOwn(users, login) ? users[login] : undefined;
  }

  private async comment(
    delivery: Delivery,
    payload: unknown,
    settle: (o: DeliveryOutcome, d: string | null, runs?: string[]) => Promise<WebhookAnswer>,
  ): Promise<WebhookAnswer> {
    if (at(payload, 'action') !== 'created') return settle('ignored', 'only new comments carry commands');
    const text = at(payload, 'comment', 'body');
    const command = parseCommand(typeof text === 'string' ? text : '');
    if (!command) return settle('ignored', 'no /drydock command');
    const repository = at(payload, 'repository', 'full_name');
    const number = at(payload, 'issue', 'number');
    if (
      typeof repository !== 'string' ||
      !at(payload, 'issue', 'pull_request') ||
      typeof number !== 'number' ||
      !Number.isSafeInteger(number)
    ) {
      return settle('ignored', '/drydock commands work on pull requests only');
    }
    if (command.kind === 'invalid') return settle('rejected', command.message);
    const rawLogin = at(payload, 'comment', 'user', 'login');
    const login = typeof rawLogin === 'string' ? rawLogin : '';
    // Comments by bots (drydock's own reports among them) never carry commands.
    if (at(payload, 'comment', 'user', 'type') === 'Bot') return settle('ignored', 'comment by a bot');
    const identity = this.mapped(login);
    if (!identity)
      return settle(
        'rejected',
        `GitHub user ${login || '(unknown)'} is not mapped to a drydock identity (github.users)`,
      );
    const subject = prSubject(repository, number);

    if (command.kind === 'plan') {
      const pr = await this.deps.lookupPullRequest?.(repository, number).catch(() => null);
      const ctx = pr
        ? pullRequestContext('pull_request', {
            action: 'opened',
            pull_request: pr,
            repository: at(payload, 'repository'),
          })
        : null;
      if (!ctx) return settle('rejected', `cannot read ${subject} to plan it (is github.token set?)`);
      const result = await this.fireMatching(delivery, ctx, true);
      return settle(result.outcome, result.detail, result.runIds);
    }
    // A mapped login acts with its identity's roles: deciding needs an approver, operator or admin token.
    const roles = await this.deps.store.rolesOf(identity);
    if (!roles.some((r) => r !== 'viewer')) {
      return settle(
        'rejected',
        `${identity} holds no token that may decide plans (approver, operator or admin)`,
      );
    }
    const plan = await this.deps.store.pendingPlanForSubject(subject);
    if (!plan) return settle('rejected', `no plan of ${subject} is pending approval`);
    try {
      const out = await this.deps.plans.decide(plan.id, command.kind, {
        identity,
        ...(command.kind === 'reject' ? { comment: command.reason } : {}),
      });
      return settle(
        'accepted',
        `${command.kind} by ${identity}: plan ${plan.id} is ${out.plan.status}`,
        out.run ? [out.run.id] : [],
      );
    } catch (err) {
      if (err instanceof DecisionError)
        return settle('rejected', `${err.status} ${err.code}: ${err.message}`);
      throw err;
    }
  }

  /** The generic fire endpoint: one run per fire, the same run again for a repeated idempotency key. */
  async fire(
    trigger: Trigger,
    input: { idempotencyKey?: string | undefined; text?: string | undefined },
  ): Promise<{
    status: 200 | 201 | 429;
    delivery: Delivery;
    run: Run | null;
    duplicate: boolean;
  }> {
    const { store, clock } = this.deps;
    const key = `${trigger.id}:${input.idempotencyKey ?? newId('dlv')}`;
    const recorded = await store.recordDelivery({
      id: newId('dlv'),
      source: 'fire',
      key,
      event: 'fire',
      triggerId: trigger.id,
      outcome: 'accepted',
      detail: null,
      subject: null,
      runIds: [],
      receivedAt: clock.now(),
    });
    if (recorded.duplicate && !abandoned(recorded.delivery, clock.now())) {
      const runId = recorded.delivery.runIds[0];
      return {
        status: 200,
        delivery: recorded.delivery,
        run: runId ? await store.getRun(runId) : null,
        duplicate: true,
      };
    }
    const now = clock.now();
    const requester = `trigger:${trigger.name}`;
    const result = await store.fireTrigger({
      triggerId: trigger.id,
      deliveryId: recorded.delivery.id,
      hourlyCap: trigger.hourlyCap,
      now,
      session: {
        name: `trigger ${trigger.name}`,
        workspace: trigger.workspace ?? '.',
        owner: requester,
        defaults: {},
        scopeKey: `trigger:${trigger.id}`,
      },
      run: {
        id: newId('run'),
        jobId: null,
        slotAt: null,
        source: 'delivery',
        prompt: renderPrompt(
          trigger.prompt,
          { kind: 'fire', event: 'fire', text: input.text ?? null },
          trigger.name,
        ),
        requestedBy: requester,
        createdAt: now,
        overrides: trigger.options,
        triggerId: trigger.id,
        deliveryId: recorded.delivery.id,
      },
    });
    const runIds = result.run ? [result.run.id] : [];
    await store.updateDelivery(recorded.delivery.id, {
      outcome: result.outcome,
      detail: result.outcome === 'capped' ? `hourly cap of ${trigger.hourlyCap} reached` : null,
      runIds,
    });
    if (result.run) this.deps.queue.submit(result.run);
    const delivery = (await store.getDelivery(recorded.delivery.id))!;
    return { status: result.run ? 201 : 429, delivery, run: result.run, duplicate: false };
  }
}

/**
 * Recorded as accepted, yet never settled (no run ids, no detail) for longer than any processing takes: the
 * process that received it died in between.
 */
function abandoned(d: Delivery, now: number): boolean {
  return (
    d.outcome === 'accepted' && d.runIds.length === 0 && d.detail === null && now - d.receivedAt > 30_000
  );
}
