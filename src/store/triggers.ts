import type { NewRun } from '../domain/new-run.js';
import type { Run, Trigger, WebhookDelivery, WebhookOutcome } from '../domain/types.js';
import type { NewJob } from './jobs.js';
import type { NewSession } from './sessions.js';

export interface WebhookDeliveryPatch {
  outcome?: WebhookOutcome;
  detail?: string | null;
  runIds?: string[];
  triggerId?: string | null;
  subject?: string | null;
  /** null drops the stored body (a settled delivery keeps none). */
  payload?: string | null;
  claimedUntil?: number | null;
  processedAt?: number | null;
}

/** What one trigger made of a delivery it looked at: its own outcome, and the run it started. */
export interface TriggerFire {
  delivery: WebhookDelivery;
  outcome: 'accepted' | 'filtered' | 'capped';
  runId: string | null;
  at: number;
}

/** Which webhook deliveries a listing shows, at most `limit` of them. */
export interface WebhookDeliveryFilter {
  /** Those this trigger took or looked at. */
  triggerId?: string | undefined;
  outcome?: WebhookOutcome | undefined;
  limit: number;
  /** The page after this delivery (an id). */
  before?: string | undefined;
}

/** A trigger firing: the session it runs in (found or made by scope key) and the run. */
export interface TriggerFireInput {
  triggerId: string;
  deliveryId: string;
  hourlyCap: number;
  now: number;
  session: Omit<NewSession, 'id' | 'createdAt'> & { scopeKey: string };
  run: Omit<NewRun, 'sessionId'>;
}

/**
 * Triggers, the webhook delivery inbox and trigger fires. A fire finds or makes its session and creates its
 * run in the same transaction; so does a scheduled trigger with its session and job.
 */
export interface TriggerStore {
  createTrigger(t: Trigger): Promise<Trigger>;
  /**
   * A scheduled trigger, its session (scope `schedule:<trigger id>`) and its job, in one transaction.
   */
  createScheduleTrigger(input: {
    trigger: Trigger;
    session: Omit<NewSession, 'createdAt'> & { scopeKey: string };
    job: NewJob;
  }): Promise<Trigger>;
  getTrigger(id: string): Promise<Trigger | null>;
  findTriggerByToken(tokenId: string): Promise<Trigger | null>;
  listTriggers(filter: { kind?: Trigger['kind']; enabled?: boolean }): Promise<Trigger[]>;
  /**
   * Merges `patch` into the trigger, atomically with `check`: called with the freshest row before anything is
   * written, it refuses the change by throwing (nothing is written then). Null when the trigger is unknown.
   */
  updateTrigger(
    id: string,
    patch: Partial<Omit<Trigger, 'id' | 'kind' | 'createdAt' | 'createdBy'>>,
    check?: (current: Trigger) => void,
  ): Promise<Trigger | null>;
  deleteTrigger(id: string): Promise<boolean>;

  // ---- the webhook delivery inbox
  /**
   * Records a delivery unless one with the same (source, key) exists: then returns that one. `payload` (the
   * verified raw body) is kept until the delivery is settled.
   */
  recordWebhookDelivery(
    d: WebhookDelivery,
    payload?: string,
  ): Promise<{ delivery: WebhookDelivery; duplicate: boolean }>;
  /** recordWebhookDelivery for several deliveries in one transaction (group commit), results in order. */
  recordWebhookDeliveries(
    items: { delivery: WebhookDelivery; payload?: string | undefined }[],
  ): Promise<{ delivery: WebhookDelivery; duplicate: boolean }[]>;
  updateWebhookDelivery(id: string, patch: WebhookDeliveryPatch): Promise<void>;
  getWebhookDelivery(id: string): Promise<WebhookDelivery | null>;
  /** The inbox: the oldest `queued` deliveries no one holds a claim on at `now`, in arrival order. */
  queuedWebhookDeliveries(limit: number, now: number): Promise<WebhookDelivery[]>;
  /**
   * Claims a queued delivery until `until` unless someone else's claim still holds. Returns its stored body
   * when it did, null when it did not (claimed by another, or no longer queued).
   */
  claimWebhookDelivery(id: string, until: number, now: number): Promise<string | null>;
  /**
   * Queues a delivery again with a redelivered body, if it failed (or an older version left it unsettled);
   * whether it did (false: someone else requeued or settled it first).
   */
  requeueWebhookDelivery(id: string, payload: string): Promise<boolean>;
  /** When the first claim on a queued webhook delivery that still holds at `now` runs out (null: none). */
  nextWebhookClaimLapse(now: number): Promise<number | null>;
  /** What one trigger made of its recent deliveries: its own outcome and run, newest first. */
  listTriggerFires(triggerId: string, limit: number): Promise<TriggerFire[]>;
  /** Newest first; `before` (a delivery id) continues a page. */
  listWebhookDeliveries(filter: WebhookDeliveryFilter): Promise<WebhookDelivery[]>;
  /**
   * In one transaction: unless the trigger already started `hourlyCap` runs in the last hour (then the
   * fire is recorded as capped), find or make the subject's session and create the run. Fires are counted
   * in whole minutes, so a fire counts against the cap for 60 to 61 minutes.
   */
  fireTrigger(input: TriggerFireInput): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }>;
  /** Records that a trigger looked at a delivery and let it pass (filters), or that a spend cap stopped it. */
  recordTriggerFire(
    triggerId: string,
    deliveryId: string,
    outcome: 'filtered' | 'capped',
    now: number,
  ): Promise<void>;
}
