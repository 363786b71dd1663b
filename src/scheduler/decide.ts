import type { SessionRun } from '../domain/slot-transition.js';
import type { CronJob } from '../domain/types.js';
import type { SlotTransition } from '../store/store.js';
import type { JitterOptions } from './jitter.js';
import { type NextFire, nextFire, type ScheduleSpec } from './next-fire.js';
import { type Arrival, applyOverlap, type Due } from './overlap.js';

export interface DecideContext {
  now: number;
  /** When this scheduler started: a one-shot due before it was missed while the daemon was down. */
  startedAt: number;
  catchupWindowMs: number;
  jitter: JitterOptions;
  newRunId: () => string;
  /** `buffer_all`: the most slots one job holds waiting; past it the oldest waiting one is skipped. */
  maxBuffered: number;
}

/** Beyond this many passed slots of one job, the rest are counted as missed without enumerating them. */
const MAX_ENUMERATED = 100_000;

export const specOf = (job: CronJob): ScheduleSpec => ({
  id: job.id,
  expr: job.effectiveCron,
  timezone: job.timezone,
  recurring: job.recurring,
  createdAt: job.createdAt,
  expiresAt: job.expiresAt,
  jitterMaxSeconds: job.jitterMaxSeconds,
});

/**
 * Whether a one-shot's slot has passed at `at` (so it is missed if it has not fired): only once its
 * nominal time is behind `at`. Its early, jittered due time does not count. The one rule for the
 * scheduler (a one-shot that passed while the daemon was down) and for resume (one that passed while
 * paused).
 */
export function oneShotPassed(nominalAt: number, at: number): boolean {
  return nominalAt < at;
}

/**
 * What to do with one job now, given its session's active runs. Pure: the store calls it inside its
 * transaction with the freshest row, so two schedulers on one database cannot both act on one slot.
 *
 * - Slots whose due time has passed are collected. Those older than the catch-up window (downtime) are
 *   recorded as missed; the newer ones arrive, oldest first, and the job's overlap policy (`overlap.ts`)
 *   says what each becomes. While the session is idle, several that arrive together fold into one fire, the
 *   older recorded as coalesced (catch-up), except under `buffer_all`, which keeps each.
 * - Under the default `buffer_one`, a busy session makes the newest slot wait as `pending`; it fires when the
 *   session is idle, and any slot that comes due meanwhile supersedes it (coalescing).
 * - A one-shot whose nominal time passed before this scheduler started was missed while down: it waits for
 *   a person. One due early (jitter) whose nominal time is still ahead fires.
 * - A one-shot, or a recurring job's final slot (its first at or after expiry), removes the job once fired.
 */
export function decide(
  job: CronJob,
  sessionBusy: boolean,
  ctx: DecideContext,
  sessionRuns: readonly SessionRun[] = [],
): SlotTransition | null {
  if (job.status !== 'active') return null;
  const dueNow = job.nextDueAt !== null && job.nextNominalAt !== null && job.nextDueAt <= ctx.now;
  if (!dueNow && (job.pendingSlotAt === null || sessionBusy)) return null;

  const current: NextFire | null =
    job.nextNominalAt !== null && job.nextDueAt !== null
      ? { nominalAt: job.nextNominalAt, dueAt: job.nextDueAt, final: job.nextFinal }
      : null;

  // The nominal time decides, not the jittered one: a one-shot may be due up to one_shot_early_ms before
  // its slot, and a scheduler that starts inside that early window must still fire it.
  if (
    dueNow &&
    !job.recurring &&
    oneShotPassed(current!.nominalAt, ctx.startedAt) &&
    job.pendingSlotAt === null
  ) {
    return {
      coalesce: [],
      missed: { firstAt: current!.nominalAt, lastAt: current!.nominalAt, slots: 1 },
      fire: null,
      pending: null,
      next: current,
      status: 'missed',
      remove: false,
    };
  }

  const due: Due = dueNow
    ? collectDue(job, current, ctx)
    : { arrivals: [], missed: null, next: current, finalPassed: false };
  return applyOverlap(job, { busy: sessionBusy, runs: sessionRuns }, due, ctx);
}

/**
 * A backfilled slot (POST /v1/jobs/:id/backfill), offered to the job as if it came due now: the overlap
 * policy applies as for a slot of the schedule; the job's next slot stays as it is. Pure, as `decide`.
 */
export function decideBackfill(
  job: CronJob,
  sessionRuns: readonly SessionRun[],
  slotAt: number,
  ctx: DecideContext,
): SlotTransition | null {
  const next: NextFire | null =
    job.nextNominalAt !== null && job.nextDueAt !== null
      ? { nominalAt: job.nextNominalAt, dueAt: job.nextDueAt, final: job.nextFinal }
      : null;
  const due: Due = {
    arrivals: [{ slotAt, final: false, dueAt: null }],
    missed: null,
    next,
    finalPassed: false,
  };
  return applyOverlap(job, { busy: sessionRuns.length > 0, runs: sessionRuns }, due, ctx);
}

function collectDue(job: CronJob, current: NextFire | null, ctx: DecideContext): Due {
  const arrivals: Arrival[] = [];
  let missed: SlotTransition['missed'] = null;
  let finalPassed = false;
  const cutoff = ctx.now - ctx.catchupWindowMs;
  const spec = specOf(job);
  let slot: NextFire | null = current;
  let enumerated = 0;
  while (slot && slot.dueAt <= ctx.now) {
    if (slot.nominalAt < cutoff) {
      missed = missed
        ? { firstAt: missed.firstAt, lastAt: slot.nominalAt, slots: missed.slots + 1 }
        : { firstAt: slot.nominalAt, lastAt: slot.nominalAt, slots: 1 };
    } else {
      arrivals.push({ slotAt: slot.nominalAt, final: slot.final, dueAt: slot.dueAt });
    }
    if (slot.final || !job.recurring) {
      finalPassed = true;
      slot = null;
      break;
    }
    enumerated += 1;
    slot =
      enumerated < MAX_ENUMERATED
        ? nextFire(spec, slot.nominalAt, ctx.now, ctx.jitter)
        : nextFire(spec, Math.max(cutoff, slot.nominalAt), ctx.now, ctx.jitter);
  }
  return { arrivals, missed, next: slot, finalPassed };
}
