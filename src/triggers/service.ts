import type { SpendCaps } from '../caps/spend-caps.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { DomainError } from '../domain/errors.js';
import { hasLimits, SpendCapError, type SpendCapHit, spendCapMessage } from '../domain/spend.js';
import type { Run, RunCheckout, Trigger, WebhookDelivery, WebhookOutcome } from '../domain/types.js';
import type { FailedJob, FailedJobsQuery, PullRequestLookup } from '../github/client.js';
import {
  type ButtonPress,
  buttonPress,
  type EventContext,
  type EventFamily,
  isEventFamily,
  issueCommentEvent,
  madeBy,
  onPullRequest,
  readEvent,
} from '../github/events/index.js';
import { pullRequestOf } from '../github/target.js';
import { newId, sortableId } from '../ids.js';
import type { Logger } from '../logger.js';
import { DecisionError, type PlanDecisions } from '../plans/decisions.js';
import type { PlanLifecycle } from '../plans/lifecycle.js';
import { decideRefusal } from '../plans/policy.js';
import type { RunQueue } from '../runs/queue.js';
import type { RunService } from '../runs/service.js';
import { GroupCommit } from '../store/group-commit.js';
import type { PlanStore, RunStore, StateStore, TriggerFireInput, TriggerStore } from '../store/store.js';
import { workspaceKindOf } from '../workspace/git.js';
import { configuredClone, type RepoCache } from '../workspace/repo-cache.js';
import { type CommentCommand, parseCommand } from './commands.js';
import { at, type PullRequestContext, prSubject, pullRequestContext } from './fire-context.js';
import { WebhookInbox } from './inbox.js';
import { factsOf, mismatch } from './match.js';
import { renderPrompt } from './template.js';

/**
 * What became of a received webhook: a ping answered (`pong`), a redelivery answered with what became of
 * the first (`duplicate`), or a delivery recorded, queued for processing or settled at once by triage
 * (`accepted`). The body is what the sender is told.
 */
export interface WebhookAnswer {
  kind: 'pong' | 'duplicate' | 'accepted';
  body: Record<string, unknown>;
}

/**
 * What became of a fire: a new run (`created`), or a repeated idempotency key answered with the first
 * fire's delivery and run (`existing`; its run is null when that fire was capped). A fire over the hourly
 * cap throws a `capped` DomainError instead.
 */
export interface FireOutcome {
  kind: 'created' | 'existing';
  delivery: WebhookDelivery;
  run: Run | null;
}

/** What became of a processed delivery. */
interface Settlement {
  outcome: WebhookOutcome;
  detail: string | null;
  runIds: string[];
  subject?: string;
}

const settlement = (
  outcome: WebhookOutcome,
  detail: string | null,
  runIds: string[] = [],
  subject?: string,
): Settlement => ({ outcome, detail, runIds, ...(subject ? { subject } : {}) });

interface Deps {
  store: PlanStore & RunStore & StateStore & TriggerStore;
  clock: Clock;
  config: Config;
  logger: Logger;
  queue: RunQueue;
  runs: RunService;
  plans: PlanDecisions;
  /** Supersedes a pull request's pending plans (the plan service). */
  lifecycle: Pick<PlanLifecycle, 'supersede'>;
  /** Reads a pull request when a comment command needs it (the comment payload lacks the head commit). */
  lookupPullRequest?: PullRequestLookup;
  /** Lists the failed jobs of a check suite or workflow run (its webhook payload lists none). */
  lookupFailedJobs?: (repository: string, query: FailedJobsQuery) => Promise<FailedJob[]>;
  /** Called with how long a delivery waited in the inbox (ms), once it is processed. */
  onProcessed?: (waitMs: number) => void;
  /** Spend caps: a fire past one starts no run (a generic fire answers 429 spend_cap). Default: no caps. */
  caps?: Pick<SpendCaps, 'check'>;
  /**
   * Where repositories without a configured clone are cloned on demand (workspace/repo-cache.ts); absent: a
   * pull request on such a repository fires no run.
   */
  repoCache?: Pick<RepoCache, 'pathOf'>;
}

/**
 * Remote triggers. A verified GitHub delivery is recorded (deduplicated on its X-GitHub-Delivery) and
 * answered at once; deliveries that may start or decide something wait in the inbox with their body, and
 * the inbox's worker routes each to the triggers it matches, records what became of it and queues the runs.
 * Nothing slow happens on answering: a run's checkout is prepared when it starts, and routing's GitHub calls (the
 * pull request of a `/drydock plan`, a failed run's jobs once a trigger fires) are the inbox worker's.
 */
export class TriggerService {
  private readonly inbox: WebhookInbox;
  /** Webhooks being recorded and answered right now: the inbox gives way to them. */
  private answering = 0;
  /** Webhooks received in the same turn of the event loop are recorded in one transaction. */
  private readonly recorder: GroupCommit<
    { delivery: WebhookDelivery; payload: string | undefined },
    { delivery: WebhookDelivery; duplicate: boolean }
  >;

  constructor(private readonly deps: Deps) {
    this.recorder = new GroupCommit((items) => deps.store.recordWebhookDeliveries(items));
    this.inbox = new WebhookInbox({
      store: deps.store,
      logger: deps.logger,
      busy: () => this.answering > 0,
      now: () => deps.clock.now(),
      process: (delivery, payload) => this.process(delivery, payload),
      fail: (delivery, err) =>
        deps.store.updateWebhookDelivery(delivery.id, {
          outcome: 'failed',
          detail: `processing failed: ${err instanceof Error ? err.message : String(err)}`,
          processedAt: deps.clock.now(),
        }),
    });
  }

  /** Processes what an earlier process left in the inbox. */
  startInbox(): void {
    this.inbox.notify();
  }

  /** Stops the inbox; it goes on with queued deliveries for at most `graceMs` (the rest wait for a start). */
  stopInbox(graceMs: number): Promise<void> {
    return this.inbox.stop(graceMs);
  }

  /**
   * A verified delivery (`raw` is its body, `payload` the parsed body). Recorded once per X-GitHub-Delivery:
   * a redelivery is answered `duplicate` with what became of the first, unless that one failed (or was
   * left unsettled by a process that died), which is then processed again.
   */
  async receiveGithub(event: string, key: string, raw: string, payload: unknown): Promise<WebhookAnswer> {
    this.answering += 1;
    try {
      return await this.receive(event, key, raw, payload);
    } finally {
      this.answering -= 1;
    }
  }

  private async receive(event: string, key: string, raw: string, payload: unknown): Promise<WebhookAnswer> {
    const { store, clock } = this.deps;
    const rawAction = at(payload, 'action');
    const now = clock.now();
    const early = triage(event, payload);
    const delivery: WebhookDelivery = {
      id: sortableId('dlv'),
      source: 'github',
      key,
      event: typeof rawAction === 'string' ? `${event}.${rawAction}` : event,
      triggerId: null,
      outcome: early?.outcome ?? 'queued',
      detail: early?.detail ?? null,
      subject: null,
      runIds: [],
      receivedAt: now,
      processedAt: early ? now : null,
    };
    const recorded = await this.recorder.add({ delivery, payload: early ? undefined : raw });
    let d = recorded.delivery;
    if (recorded.duplicate) {
      if (
        !early &&
        (d.outcome === 'failed' || abandoned(d, now)) &&
        (await store.requeueWebhookDelivery(d.id, raw))
      ) {
        this.inbox.notify();
        d = { ...d, outcome: 'queued', detail: null };
      } else if (event === 'ping') {
        return { kind: 'pong', body: { pong: true, duplicate: true, delivery_id: d.id } };
      } else {
        return {
          kind: 'duplicate',
          body: {
            duplicate: true,
            delivery_id: d.id,
            outcome: d.outcome,
            detail: d.detail,
            run_ids: d.runIds,
          },
        };
      }
    } else if (event === 'ping') {
      return { kind: 'pong', body: { pong: true, delivery_id: d.id } };
    } else if (!early) {
      this.inbox.notify();
    }
    return {
      kind: 'accepted',
      body: { delivery_id: d.id, outcome: d.outcome, detail: d.detail, run_ids: d.runIds },
    };
  }

  /** The inbox's worker: routes one queued delivery and settles it (its stored body is dropped). */
  private async process(delivery: WebhookDelivery, raw: string): Promise<void> {
    const { store, clock } = this.deps;
    const event = delivery.event.split('.')[0]!;
    const s = await this.route(event, JSON.parse(raw), delivery);
    const now = clock.now();
    await store.updateWebhookDelivery(delivery.id, {
      outcome: s.outcome,
      detail: s.detail,
      runIds: s.runIds,
      ...(s.subject ? { subject: s.subject } : {}),
      payload: null,
      processedAt: now,
    });
    this.deps.onProcessed?.(now - delivery.receivedAt);
  }

  private async route(event: string, payload: unknown, delivery: WebhookDelivery): Promise<Settlement> {
    if (event === 'pull_request') {
      const ctx = pullRequestContext(event, payload);
      if (!ctx) return settlement('rejected', 'the pull_request payload lacks required fields');
      return this.pullRequest(delivery, ctx);
    }
    if (event === 'issue_comment') return this.comment(delivery, payload);
    if (event === 'check_run') return this.button(delivery, payload);
    if (isEventFamily(event)) return this.otherEvent(delivery, event, payload);
    return settlement('ignored', `no trigger handles ${event} events`);
  }

  /** An event beside pull requests (src/github/events/ reads it): fires the triggers it matches. */
  private async otherEvent(
    delivery: WebhookDelivery,
    event: EventFamily,
    payload: unknown,
  ): Promise<Settlement> {
    const reading = readEvent(event, payload);
    if ('outcome' in reading) return settlement(reading.outcome, reading.detail);
    return this.fireEvent(delivery, reading.context);
  }

  private async fireEvent(delivery: WebhookDelivery, ctx: EventContext): Promise<Settlement> {
    const result = await this.fireMatching(delivery, ctx);
    return settlement(result.outcome, result.detail, result.runIds, ctx.subject);
  }

  private async pullRequest(delivery: WebhookDelivery, ctx: PullRequestContext): Promise<Settlement> {
    const subject = prSubject(ctx.repository, ctx.number);
    const action = ctx.event.split('.')[1];
    let superseded: string[] = [];
    if (action === 'synchronize' || action === 'closed') {
      // New commits (or a closed PR): plans made against the old head are no longer what would be merged.
      superseded = await this.supersede(subject, delivery.id);
    }
    const result = await this.fireMatching(delivery, ctx);
    const detail = [result.detail, superseded.length ? `superseded ${superseded.join(', ')}` : null]
      .filter(Boolean)
      .join('; ');
    return settlement(result.outcome, detail || null, result.runIds, subject);
  }

  /**
   * Earlier work on the pull request goes: its pending plans are superseded, and its plan runs still
   * exploring the old head (they would only propose stale plans) are canceled. What this delivery itself
   * started is kept, so processing it again (after a crash or a failure) undoes nothing it did.
   */
  private async supersede(subject: string, deliveryId: string): Promise<string[]> {
    const { store, lifecycle } = this.deps;
    const ids = await lifecycle.supersede(subject, deliveryId);
    for (const run of await store.activeRunsForSubject(subject)) {
      if (run.phase === 'plan' && run.deliveryId !== deliveryId) await this.deps.runs.cancel(run.id);
    }
    return ids;
  }

  /**
   * Fires every enabled github trigger the event matches. `anyPullRequestEvent` (a `/drydock plan` on a pull
   * request): every trigger that names some pull_request event fires, whatever its action.
   */
  private async fireMatching(
    delivery: WebhookDelivery,
    original: PullRequestContext | EventContext,
    anyPullRequestEvent = false,
  ): Promise<{ outcome: WebhookOutcome; detail: string | null; runIds: string[] }> {
    const { store, clock } = this.deps;
    const triggers = await store.listTriggers({ kind: 'github', enabled: true });
    const facts = factsOf(original);
    let ctx = original;
    let enriched = false;
    const runIds: string[] = [];
    const reasons: string[] = [];
    let capped = 0;
    let matched = 0;
    for (const trigger of triggers) {
      const forced =
        anyPullRequestEvent && trigger.events.some((e) => e.split('.')[0] === 'pull_request')
          ? { ...trigger, events: [facts.event] }
          : trigger;
      const why = mismatch(forced, facts);
      if (why) {
        await store.recordTriggerFire(trigger.id, delivery.id, 'filtered', clock.now());
        reasons.push(`${trigger.name}: ${why}`);
        continue;
      }
      matched += 1;
      const clone = this.cloneOf(ctx.repository);
      if ('refused' in clone) {
        reasons.push(`${trigger.name}: ${clone.refused}`);
        continue;
      }
      if (!enriched && ctx.kind === 'event') {
        ctx = await this.withFailedJobs(ctx);
        enriched = true;
      }
      const spendCap = await this.spendCapOf(trigger);
      if (spendCap) {
        await store.recordTriggerFire(trigger.id, delivery.id, 'capped', clock.now());
        capped += 1;
        reasons.push(`${trigger.name}: ${spendCapMessage(spendCap)}`);
        continue;
      }
      const fired = await this.start(trigger, delivery.id, ctx, clone.path);
      if (fired.outcome === 'capped') {
        capped += 1;
        reasons.push(`${trigger.name}: hourly cap of ${trigger.hourlyCap} reached`);
      } else if (fired.run) {
        runIds.push(fired.run.id);
      }
    }
    const outcome: WebhookOutcome = runIds.length
      ? 'accepted'
      : capped
        ? 'capped'
        : matched
          ? 'rejected'
          : 'filtered';
    return { outcome, detail: reasons.length ? reasons.join('; ') : null, runIds };
  }

  /**
   * The spend cap a fire of `trigger` would start past (SpendCaps.check), or null. A fire has no session yet,
   * so only the trigger's own caps and the global ones (config `limits`) can stop it: when none of them is
   * set, nothing can, and the day's spend is not read (a read of every run of the day, per fire).
   */
  private async spendCapOf(trigger: Trigger): Promise<SpendCapHit | null> {
    const { caps, config } = this.deps;
    if (!caps) return null;
    const global = config.limits;
    if (!hasLimits(trigger.limits) && global.daily_usd === null && global.daily_runs === null) return null;
    return caps.check({ sessionId: null, triggerId: trigger.id });
  }

  /**
   * A failed check suite's or workflow run's jobs, looked up once per delivery (only when a trigger fires): their
   * names and pages join the external data. Without github.token, or when GitHub does not answer, the run goes
   * on without them and the data says why.
   */
  private async withFailedJobs(ctx: EventContext): Promise<EventContext> {
    if (!ctx.jobs) return ctx;
    const lookup = this.deps.lookupFailedJobs;
    let jobs: FailedJob[] | null = null;
    let note: string | null = null;
    if (!lookup) note = 'not looked up: github.token is not set';
    else {
      try {
        jobs = await lookup(ctx.repository, ctx.jobs);
      } catch (err) {
        const status = (err as { status?: unknown }).status;
        note = `GitHub did not list them (${typeof status === 'number' ? status : 'no answer'})`;
      }
    }
    const failedJobs = jobs?.map((j) => ({
      name: j.name,
      conclusion: j.conclusion,
      url: j.url,
      details_url: j.detailsUrl,
      failed_steps: j.failedSteps,
    }));
    return {
      ...ctx,
      external: {
        ...ctx.external,
        failed_jobs: failedJobs ?? null,
        ...(note ? { failed_jobs_note: note } : {}),
      },
    };
  }

  /**
   * The local clone a repository's runs work in: the configured one (github.repositories), else its cache,
   * cloned on demand when a run starts. Refused: a name that is not a plain GitHub name (it never reaches a
   * path), or no cache.
   */
  private cloneOf(repository: string): { path: string } | { refused: string } {
    const configured = configuredClone(this.deps.config.github.repositories, repository);
    if (configured) return { path: configured };
    const cache = this.deps.repoCache;
    if (!cache) return { refused: `no local clone configured for ${repository} (github.repositories)` };
    try {
      return { path: cache.pathOf(repository) };
    } catch (err) {
      return { refused: (err as Error).message };
    }
  }

  private async start(
    trigger: Trigger,
    deliveryId: string,
    ctx: PullRequestContext | EventContext,
    clone: string,
  ): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }> {
    const { store, clock } = this.deps;
    const subject = subjectOf(ctx);
    const login = ctx.kind === 'pull_request' ? ctx.author : ctx.requester;
    const requester = login ? this.identityOf(login) : `trigger:${trigger.name}`;
    const now = clock.now();
    const result = await store.fireTrigger({
      triggerId: trigger.id,
      deliveryId,
      hourlyCap: trigger.hourlyCap,
      now,
      session: {
        name: `${trigger.name}: ${subject}`,
        workspace: clone,
        workspaceKind: 'git',
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
        checkout: checkoutOf(ctx, clone),
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

  /**
   * A `/drydock` command in a comment on a pull request or an issue, from a GitHub login config maps to a drydock
   * identity (others are refused). On an issue, `/drydock plan <text>` fires the triggers on issue_comment.
   */
  private async comment(delivery: WebhookDelivery, payload: unknown): Promise<Settlement> {
    const command = commentCommand(payload);
    if (!command) return settlement('ignored', 'no /drydock command');
    const repository = at(payload, 'repository', 'full_name');
    const number = at(payload, 'issue', 'number');
    if (typeof repository !== 'string' || typeof number !== 'number' || !Number.isSafeInteger(number)) {
      return settlement('ignored', 'the comment names no issue or pull request');
    }
    if (command.kind === 'invalid') return settlement('rejected', command.message);
    const rawLogin = at(payload, 'comment', 'user', 'login');
    const login = typeof rawLogin === 'string' ? rawLogin : '';
    const identity = this.mapped(login);
    if (!identity)
      return settlement(
        'rejected',
        `GitHub user ${login || '(unknown)'} is not mapped to a drydock identity (github.users)`,
      );
    if (command.kind === 'plan' && !onPullRequest(payload)) {
      const reading = issueCommentEvent(payload, command.text);
      if ('outcome' in reading) return settlement(reading.outcome, reading.detail);
      return this.fireEvent(delivery, reading.context);
    }
    if (command.kind === 'plan') return this.planCommand(delivery, payload, repository, number);
    return this.decideCommand(delivery, command, identity, prSubject(repository, number));
  }

  /** `/drydock plan`: fires the matching triggers on the pull request as it is now. */
  private async planCommand(
    delivery: WebhookDelivery,
    payload: unknown,
    repository: string,
    number: number,
  ): Promise<Settlement> {
    const pr = await this.deps.lookupPullRequest?.(repository, number).catch(() => null);
    const ctx = pr
      ? pullRequestContext('pull_request', {
          action: 'opened',
          pull_request: pr,
          repository: at(payload, 'repository'),
        })
      : null;
    if (!ctx)
      return settlement(
        'rejected',
        `cannot read ${prSubject(repository, number)} to plan it (is github.token or github.app set?)`,
      );
    const result = await this.fireMatching(delivery, ctx, true);
    return settlement(result.outcome, result.detail, result.runIds);
  }

  /**
   * `/drydock approve` and `/drydock reject <reason>` on the pull request's pending plan. A mapped login acts
   * with its identity's roles; who may decide, and who may approve, are the plan policy's (src/plans/policy.ts):
   * the role here, the rest in the decision.
   */
  private decideCommand(
    delivery: WebhookDelivery,
    command: Extract<CommentCommand, { kind: 'approve' | 'reject' }>,
    identity: string,
    subject: string,
  ): Promise<Settlement> {
    const comment = command.kind === 'reject' ? command.reason : undefined;
    return this.decideAs(delivery, { kind: command.kind, comment }, identity, async () => {
      const plan = await this.deps.store.pendingPlanForSubject(subject);
      return plan?.id ?? settlement('rejected', `no plan of ${subject} is pending approval`);
    });
  }

  /**
   * Approve or Reject pressed on a plan's check run (src/github/check-run.ts). The check run must be one drydock's
   * App made, and its external_id must name a plan of the payload's repository made against the check run's
   * commit, else nothing is decided (the payload is GitHub's and signed, but drydock never acts on a plan of
   * another repository, or on another App's check run, on its word). Then
   * the same path as the comment commands: the pressing login must map to a drydock identity (github.users), and
   * the plan policy decides whether that identity may (the requester, the pull request's author, may not
   * approve unless the plan allows self-approval). A button carries no text: a reject gets a fixed reason.
   */
  private async button(delivery: WebhookDelivery, payload: unknown): Promise<Settlement> {
    const press = buttonPress(payload);
    if ('outcome' in press) return settlement(press.outcome, press.detail);
    const appId = this.deps.config.github.app.id;
    const foreign = !madeBy(press, appId)
      ? `the check run was made by App ${press.app.id ?? press.app.clientId ?? '(unnamed)'}, not by drydock's (github.app.id ${appId ?? 'not set'})`
      : await this.foreignPlan(press);
    if (foreign) {
      this.deps.logger.warn(
        { delivery: delivery.key, plan_id: press.planId, repository: press.repository, reason: foreign },
        'check run button ignored',
      );
      return settlement('ignored', foreign);
    }
    const identity = this.mapped(press.login);
    if (!identity)
      return settlement(
        'rejected',
        `GitHub user ${press.login} is not mapped to a drydock identity (github.users)`,
      );
    const comment =
      press.decision === 'reject' ? `rejected from the GitHub check run by @${press.login}` : undefined;
    return this.decideAs(delivery, { kind: press.decision, comment }, identity, async () => press.planId);
  }

  /** Why a button's plan is not one of the payload's repository at the check run's commit, or null when it is. */
  private async foreignPlan(press: ButtonPress): Promise<string | null> {
    const { store } = this.deps;
    const plan = await store.getPlan(press.planId);
    const pr = plan ? await pullRequestOf(store, await store.getRun(plan.runId)) : null;
    const same =
      pr !== null &&
      pr.repository.toLowerCase() === press.repository.toLowerCase() &&
      pr.headSha === press.headSha;
    return same
      ? null
      : `the check run's external_id ${press.planId} names no plan of ${press.repository} at ${press.headSha.slice(0, 12)}`;
  }

  /**
   * One decision from a webhook (a comment command or a button), by `identity`, on the plan `target` names (or
   * the settlement saying why there is none). The role is checked first; a delivery processed again after a
   * crash between deciding and settling keeps the decision it made; the rest is the plan policy's, inside
   * `plans.decide`.
   */
  private async decideAs(
    delivery: WebhookDelivery,
    decision: { kind: 'approve' | 'reject'; comment: string | undefined },
    identity: string,
    target: () => Promise<string | Settlement>,
  ): Promise<Settlement> {
    const { store } = this.deps;
    const { kind, comment } = decision;
    const barred = decideRefusal({ identity, roles: await store.rolesOf(identity) });
    if (barred) return settlement('rejected', barred.message);
    const earlier = await this.decidedBefore(delivery, kind, identity);
    if (earlier) return earlier;
    const planId = await target();
    if (typeof planId !== 'string') return planId;
    await store.updateWebhookDelivery(delivery.id, { detail: `deciding ${planId}` });
    try {
      const out = await this.deps.plans.decide(planId, kind, {
        identity,
        ...(comment !== undefined ? { comment } : {}),
      });
      return settlement(
        'accepted',
        `${kind} by ${identity}: plan ${planId} is ${out.plan.status}`,
        out.run ? [out.run.id] : [],
      );
    } catch (err) {
      if (err instanceof DecisionError) return settlement('rejected', `${err.code}: ${err.message}`);
      throw err;
    }
  }

  /** Processed again after a crash between deciding and settling: the decision it made stands. */
  private async decidedBefore(
    delivery: WebhookDelivery,
    kind: 'approve' | 'reject',
    identity: string,
  ): Promise<Settlement | null> {
    const earlier = DECIDING.exec(delivery.detail ?? '')?.[1];
    if (!earlier) return null;
    const made = (await this.deps.store.listDecisions(earlier)).find(
      (d) => d.identity === identity && d.kind === kind && d.createdAt >= delivery.receivedAt,
    );
    if (!made) return null;
    const now = await this.deps.store.getPlan(earlier);
    return settlement('accepted', `${kind} by ${identity}: plan ${earlier} is ${now?.status}`);
  }

  /** The generic fire endpoint: one run per fire, the same run again for a repeated idempotency key. */
  async fire(
    trigger: Trigger,
    input: { idempotencyKey?: string | undefined; text?: string | undefined },
  ): Promise<FireOutcome> {
    const { store, clock } = this.deps;
    const key = `${trigger.id}:${input.idempotencyKey ?? newId('dlv')}`;
    const recorded = await store.recordWebhookDelivery({
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
      processedAt: null,
    });
    // A repeated key whose first fire settled gets that fire's answer. One that never settled (its process
    // died between recording and firing, or it is still being fired) is fired now: the store's fire is
    // idempotent per (trigger, delivery), so both attempts come back with the same single run.
    if (recorded.duplicate && recorded.delivery.processedAt !== null) {
      const runId = recorded.delivery.runIds[0];
      return {
        kind: 'existing',
        delivery: recorded.delivery,
        run: runId ? await store.getRun(runId) : null,
      };
    }
    const spendCap = await this.spendCapOf(trigger);
    if (spendCap) {
      await store.updateWebhookDelivery(recorded.delivery.id, {
        outcome: 'capped',
        detail: spendCapMessage(spendCap),
        processedAt: clock.now(),
      });
      throw new SpendCapError(spendCap);
    }
    const result = await store.fireTrigger(await this.fireInput(trigger, recorded.delivery.id, input.text));
    const runIds = result.run ? [result.run.id] : [];
    await store.updateWebhookDelivery(recorded.delivery.id, {
      outcome: result.outcome,
      detail: result.outcome === 'capped' ? `hourly cap of ${trigger.hourlyCap} reached` : null,
      runIds,
      processedAt: clock.now(),
    });
    // A retry may get back a run the first attempt already started.
    if (result.run?.status === 'queued') this.deps.queue.submit(result.run);
    if (!result.run) {
      throw new DomainError(
        'capped',
        `trigger ${trigger.name} reached its hourly cap of ${trigger.hourlyCap} runs`,
      );
    }
    const delivery = (await store.getWebhookDelivery(recorded.delivery.id))!;
    return { kind: recorded.duplicate ? 'existing' : 'created', delivery, run: result.run };
  }

  /** What a generic fire asks the store for: the trigger's session (made on its first fire) and one run. */
  private async fireInput(
    trigger: Trigger,
    deliveryId: string,
    text: string | undefined,
  ): Promise<TriggerFireInput> {
    const now = this.deps.clock.now();
    const requester = `trigger:${trigger.name}`;
    return {
      triggerId: trigger.id,
      deliveryId,
      hourlyCap: trigger.hourlyCap,
      now,
      session: {
        name: `trigger ${trigger.name}`,
        workspace: trigger.workspace ?? '.',
        workspaceKind: await workspaceKindOf(trigger.workspace ?? '.'),
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
          { kind: 'fire', event: 'fire', text: text ?? null },
          trigger.name,
        ),
        requestedBy: requester,
        createdAt: now,
        overrides: trigger.options,
        triggerId: trigger.id,
        deliveryId,
      },
    };
  }
}

/**
 * A fire recorded as accepted, yet never settled for longer than any processing takes: the process that
 * received it died in between. (Webhook deliveries wait as `queued` instead, and a start processes them.)
 */
function abandoned(d: WebhookDelivery, now: number): boolean {
  return d.outcome === 'accepted' && d.processedAt === null && now - d.receivedAt > 30_000;
}

/** The mark a comment command leaves on its delivery just before it decides a plan. */
const DECIDING = /^deciding (\S+)$/;

/** What a run of a pull request or another event belongs to: its session, its plans (superseded together). */
function subjectOf(ctx: PullRequestContext | EventContext): string {
  return ctx.kind === 'pull_request' ? prSubject(ctx.repository, ctx.number) : ctx.subject;
}

/**
 * Where a run plans: a pull request's head, a merged pull request's merge commit (its base branch's head when
 * the payload names no merge commit: the head may be gone), or the commit another event names.
 */
function checkoutOf(ctx: PullRequestContext | EventContext, clone: string): RunCheckout {
  if (ctx.kind === 'event') return { kind: 'commit', repository: ctx.repository, clone, ...ctx.target };
  if (ctx.merged) {
    const ref = `refs/heads/${ctx.baseRef}`;
    return {
      kind: 'commit',
      repository: ctx.repository,
      clone,
      sha: ctx.mergeSha ?? null,
      ref,
      memory: true,
    };
  }
  return {
    repository: ctx.repository,
    clone,
    headSha: ctx.headSha,
    headRef: ctx.headRef,
    baseRef: ctx.baseRef,
    baseSha: ctx.baseSha,
    headRepository: ctx.headRepository,
    number: ctx.number,
  };
}

/**
 * What can be told from the payload alone, at once: pings, events no trigger handles, actions that fire no
 * trigger, comments that carry no command. null: the delivery goes to the inbox.
 */
function triage(event: string, payload: unknown): { outcome: WebhookOutcome; detail: string } | null {
  if (event === 'ping') return { outcome: 'ignored', detail: 'ping' };
  if (event === 'pull_request') return null;
  if (isEventFamily(event) && event !== 'issue_comment') {
    // Read now (a pure, bounded read): a tag push, a draft release, an action no trigger names or a payload
    // that cannot be planned on settles at once; what may fire waits in the inbox with its body.
    const reading = readEvent(event, payload);
    return 'outcome' in reading ? { outcome: reading.outcome, detail: reading.detail } : null;
  }
  if (event === 'check_run') {
    // Only a press of the plan's buttons waits in the inbox; any other check_run settles at once.
    const press = buttonPress(payload);
    return 'outcome' in press ? { outcome: press.outcome, detail: press.detail } : null;
  }
  if (event !== 'issue_comment') return { outcome: 'ignored', detail: `no trigger handles ${event} events` };
  if (at(payload, 'action') !== 'created')
    return { outcome: 'ignored', detail: 'only new comments carry commands' };
  // Comments by bots (drydock's own reports among them) never carry commands.
  if (at(payload, 'comment', 'user', 'type') === 'Bot')
    return { outcome: 'ignored', detail: 'comment by a bot' };
  if (!commentCommand(payload)) return { outcome: 'ignored', detail: 'no /drydock command' };
  return null;
}

function commentCommand(payload: unknown): ReturnType<typeof parseCommand> {
  const text = at(payload, 'comment', 'body');
  return parseCommand(typeof text === 'string' ? text : '');
}
