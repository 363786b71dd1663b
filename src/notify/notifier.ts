import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config, WebhookConfig } from '../config/schema.js';
import type { LoggedEvent, NewNotification, Notification } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { PassLoop } from '../pass-loop.js';
import type { Reaction } from '../reactions/reactions.js';
import { type OutboxStore, StoreUnavailableError } from '../store/store.js';
import { ANNOUNCED_RUN_EVENTS, announce, planIdOf } from './announce.js';
import { retryDelay } from './backoff.js';
import { type FactsConfig, type FactsStore, gatherFacts } from './facts.js';
import { renderBody } from './format.js';
import { postNotification } from './send.js';
import { shownUrl, subscribers, webhookKey } from './webhooks.js';

export type NotificationOutcomeLabel = 'delivered' | 'retried' | 'failed';

export interface NotifierDeps {
  store: OutboxStore & FactsStore;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'notifications'> & { server: Pick<Config['server'], 'public_url'> } & FactsConfig;
  /** Each attempt's outcome (metrics). */
  onOutcome?: (event: string, outcome: NotificationOutcomeLabel) => void;
  /** [0, 1): the jitter of retry delays (tests pin it). */
  random?: () => number;
}

/** Requests in flight at once, across receivers. */
const MAX_IN_FLIGHT = 4;
/** An attempt holds its row this much longer than its timeout (a SIGKILLed attempt is retried after). */
const HOLD_MARGIN_MS = 1_000;

/**
 * Outbound notifications from a durable outbox, in two steps that each survive a crash:
 *
 * 1. collect: a reaction (src/reactions/, named `notifications`) to the events that announce something in the
 *    stored run event log. Each is mapped (announce.ts) to one outbox row per subscribed webhook, written
 *    under a unique (event, webhook) key: an event handed over again (a crash before its cursor moved, a
 *    second replica) writes nothing new. The reaction's cursor is where the notifier's own cursor was
 *    (migration 20 moved it), and on the first start it is placed at the log's end: the past is not announced.
 * 2. send: due rows are claimed (one more attempt, held for the request's timeout plus a margin), POSTed,
 *    and marked delivered, due again after a backoff, or failed after the last attempt. A crash mid-request
 *    leaves the row held: it is due again when the hold runs out. So delivery is at least once, and the
 *    row's id (X-Drydock-Delivery, the same on every attempt) lets a receiver drop repeats.
 *
 * The send step runs on a loop of its own, woken by each row collected and by other replicas' outbox
 * wake-ups, and looking every poll_interval_ms anyway (due retries).
 */
export class Notifier {
  private readonly loop = new PassLoop({ pass: () => this.pass() });
  private readonly inFlight = new Set<Promise<void>>();
  private readonly hooks: Map<string, WebhookConfig>;

  constructor(private readonly deps: NotifierDeps) {
    this.hooks = new Map(deps.config.notifications.webhooks.map((h) => [webhookKey(h.url), h]));
  }

  /** The collect step, as a reaction to the stored event log. */
  readonly reaction: Reaction = {
    name: 'notifications',
    types: ANNOUNCED_RUN_EVENTS,
    react: async (event) => {
      await this.collect(event);
    },
  };

  start(): void {
    this.loop.start();
  }

  kick(): void {
    this.loop.kick();
  }

  /** Stops the loop and waits for requests in flight. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all([...this.inFlight]);
  }

  /** One pass: start due attempts; returns the wait until the next. */
  private async pass(): Promise<number> {
    try {
      await this.sendDue();
      return await this.nextWait();
    } catch (err) {
      // An unreachable database is logged once per outage by the store.
      this.deps.logger[err instanceof StoreUnavailableError ? 'debug' : 'warn'](
        { err },
        'notifications: a pass failed (retried at the next one)',
      );
      return this.deps.config.notifications.poll_interval_ms;
    }
  }

  private async nextWait(): Promise<number> {
    const poll = this.deps.config.notifications.poll_interval_ms;
    const due = await this.deps.store.nextNotificationDue();
    if (due === null) return poll;
    return Math.max(0, Math.min(poll, due - this.deps.clock.now()));
  }

  /** Writes the outbox rows one event makes (none twice: the (event, webhook) key); how many were new. */
  async collect(event: LoggedEvent): Promise<number> {
    const rows = await this.rowsFor(event);
    if (rows.length === 0) return 0;
    // The rows carry their event's rowid, which the store's own notification cursor is moved to as well.
    const added = await this.deps.store.enqueueNotifications(rows, event.rowid);
    if (added > 0) this.kick();
    return added;
  }

  private async rowsFor(event: LoggedEvent): Promise<NewNotification[]> {
    const { store, config } = this.deps;
    if (config.notifications.webhooks.length === 0) return [];
    const run = await store.getRun(event.runId);
    const planId = planIdOf(event, run);
    const plan = planId ? await store.getPlan(planId) : null;
    const publicUrl = config.server.public_url;
    // Which event it is, before the facts are read for the webhooks that want it.
    const bare = announce(event, { run, plan, publicUrl });
    if (!bare || subscribers(config.notifications.webhooks, bare.event).length === 0) return [];
    const facts = await gatherFacts(store, config, run, plan);
    const a = announce(event, { run, plan, publicUrl, facts });
    if (!a) return [];
    return subscribers(config.notifications.webhooks, a.event).map((hook) => {
      const id = notificationId();
      const createdAt = event.at;
      return {
        id,
        eventRowid: event.rowid,
        webhook: webhookKey(hook.url),
        webhookUrl: shownUrl(hook.url),
        event: a.event,
        runId: a.runId,
        planId: a.planId,
        data: a.data as unknown as Record<string, unknown>,
        body: renderBody(hook.format, {
          id,
          event: a.event,
          created_at: new Date(createdAt).toISOString(),
          data: a.data,
        }),
        nextAttemptAt: this.deps.clock.now(),
        createdAt,
      };
    });
  }

  /** Claims what is due, as many as free request slots, and starts their attempts. */
  private async sendDue(): Promise<void> {
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0 || this.loop.stopped) return;
    const { store, clock, config } = this.deps;
    const now = clock.now();
    const claimed = await store.claimNotifications(
      now,
      now + config.notifications.timeout_ms + HOLD_MARGIN_MS,
      free,
    );
    for (const n of claimed) {
      const attempt: Promise<void> = this.attempt(n)
        .catch((err) =>
          this.deps.logger.warn({ err, notification_id: n.id }, 'notifications: attempt failed'),
        )
        .finally(() => {
          this.inFlight.delete(attempt);
          this.kick();
        });
      this.inFlight.add(attempt);
    }
  }

  private async attempt(n: Notification): Promise<void> {
    const { store, clock, logger, config } = this.deps;
    const settings = config.notifications;
    const fields = { notification_id: n.id, event: n.event, webhook: n.webhookUrl, attempt: n.attempts };
    const hook = this.hooks.get(n.webhook);
    if (!hook) {
      await this.fail(n, 'the webhook is no longer configured');
      logger.warn(fields, 'notification dropped: its webhook is no longer configured');
      return;
    }
    if (n.attempts > settings.max_attempts) {
      // The last attempt was cut off (the daemon stopped mid-request) and none is left.
      await this.fail(n, n.lastError ?? 'the last attempt was cut off');
      return;
    }
    const r = await postNotification(
      n,
      { url: hook.url, secret: hook.secret, timeoutMs: settings.timeout_ms },
      clock.now(),
    );
    if (r.ok) {
      await store.settleNotification(n.id, { status: 'delivered', at: clock.now() });
      this.deps.onOutcome?.(n.event, 'delivered');
      logger.debug(fields, 'notification delivered');
      return;
    }
    if (r.permanent || n.attempts >= settings.max_attempts) {
      await this.fail(n, r.error);
      logger.warn({ ...fields, error: r.error }, 'notification failed: no attempt left');
      return;
    }
    const delay = retryDelay(n.attempts, {
      baseMs: settings.backoff_base_ms,
      maxMs: settings.backoff_max_ms,
      random: (this.deps.random ?? Math.random)(),
      retryAfterMs: r.retryAfterMs,
    });
    await store.settleNotification(n.id, {
      status: 'pending',
      nextAttemptAt: clock.now() + delay,
      error: r.error,
    });
    this.deps.onOutcome?.(n.event, 'retried');
    logger.info({ ...fields, error: r.error, retry_in_ms: delay }, 'notification attempt failed; will retry');
  }

  private async fail(n: Notification, error: string): Promise<void> {
    await this.deps.store.settleNotification(n.id, { status: 'failed', error });
    this.deps.onOutcome?.(n.event, 'failed');
  }
}

/** The idempotency id of a notification: 96 random bits. */
export function notificationId(): string {
  return `ntf_${randomBytes(12).toString('base64url')}`;
}
