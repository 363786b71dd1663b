import { DomainError } from '../domain/errors.js';
import type { ApprovalStore } from './approvals.js';
import type { ReactionCursorStore } from './cursors.js';
import type { JobStore } from './jobs.js';
import type { OutboxStore } from './outbox.js';
import type { PlanStore } from './plans.js';
import type { RunStore } from './runs.js';
import type { SessionStore } from './sessions.js';
import type { StateStore } from './state.js';
import type { TriggerStore } from './triggers.js';
import type { UsageStore } from './usage.js';
import type { WakeStore } from './wakes.js';

// The parts of the Store, one module per aggregate, and the domain's decision types, re-exported so that
// importers of this module keep working; new code may import the precise module.
export type { NewRun } from '../domain/new-run.js';
export type { DecisionEffect } from '../domain/plan-decision.js';
export type { DecideFn, SessionRun, SlotTransition } from '../domain/slot-transition.js';
export type { ApprovalStore } from './approvals.js';
export type { ReactionCursorStore } from './cursors.js';
export type {
  AdvanceResult,
  BackfillDecideFn,
  BackfillResult,
  JobFilter,
  JobStore,
  NewJob,
  RecentSlot,
} from './jobs.js';
export { type Fence, FencedError, type Receipt, type RunClaim } from './leases.js';
export type { OutboxStore, PlanDeliveryPatch } from './outbox.js';
export type { DecidedPlan, DecisionReceipt, PlanFilter, PlanStore } from './plans.js';
export type { NewToolCall, RunFilter, RunStore } from './runs.js';
export type { NewSession, SessionFilter, SessionStore } from './sessions.js';
export type { StateStore, StoreStats } from './state.js';
export type {
  TriggerFire,
  TriggerFireInput,
  TriggerStore,
  WebhookDeliveryFilter,
  WebhookDeliveryPatch,
} from './triggers.js';
export type { SpendState, UsageKey, UsageRow, UsageStore } from './usage.js';
export type { WakeChannel, WakeStore } from './wakes.js';

/**
 * All persistence goes through this interface. It is async so that a networked database can implement it;
 * no driver type appears in it. It is made of one part per aggregate (one module each: sessions.ts, jobs.ts, runs.ts,
 * approvals.ts, plans.ts, triggers.ts, outbox.ts, state.ts, wakes.ts, cursors.ts, usage.ts): a backend implements each part
 * on its own, and `composeStore` (compose.ts) puts the parts together into one Store.
 */
export interface Store
  extends SessionStore,
    JobStore,
    RunStore,
    ApprovalStore,
    PlanStore,
    TriggerStore,
    OutboxStore,
    StateStore,
    WakeStore,
    ReactionCursorStore,
    UsageStore {}

export class NotFoundError extends DomainError<'not_found'> {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ConflictError extends DomainError<'conflict'> {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** A job's name is taken in its session (names are how `drydock apply` finds a job again). */
export const duplicateJobName = (j: { sessionId: string; name?: string | null }, otherId: string) =>
  new ConflictError(
    `session ${j.sessionId} already has a job named "${j.name}" (${otherId}); job names are unique within a session`,
  );

export class JobLimitError extends ConflictError {
  constructor(readonly limit: number) {
    super(`session already has ${limit} jobs, the most a session may hold`);
  }
}

/**
 * The database cannot be reached (refused, gone mid-statement, shutting down): nothing was decided, or, for
 * a transaction cut before its COMMIT was answered, the outcome is unknown. The API answers 503 with
 * Retry-After; loops try again later.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(override readonly cause: unknown) {
    super(`the database cannot be reached: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export class SchemaTooNewError extends Error {
  constructor(
    readonly current: number,
    readonly latest: number,
  ) {
    super(
      `the database schema is at version ${current}, newer than this build of drydock knows (${latest}). ` +
        'Upgrade drydock to a release that includes migration ' +
        `${String(current).padStart(6, '0')}, or restore a backup taken before the upgrade.`,
    );
  }
}

export class InvalidCursorError extends DomainError<'bad_cursor'> {
  constructor() {
    super('bad_cursor', 'cursor is not one this server issued');
  }
}
