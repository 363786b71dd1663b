import type { CronJob } from '../domain/types.js';
import type { SlotTransition } from '../store/store.js';
import type { JitterOptions } from './jitter.js';
import { type NextFire, nextFire, type ScheduleSpec } from './next-fire.js';

export interface DecideContext {
  now: number;
  /** When this scheduler started: a one-shot due before it was missed while the daemon was down. */
  startedAt: number;
  catchupWindowMs: number;
  jitter: JitterOptions;
  newRunId: () => string;
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
 * What to do with one job now, given whether its session is busy. Pure: the store calls it inside its
 * transaction with the freshest row, so two schedulers on one database cannot both act on one slot.
 *
 * - Slots whose due time has passed are collected. Those older than the catch-up window (downtime) are
 *   recorded as missed; the newer ones fold into one fire, the older of them recorded as coalesced.
 * - A busy session makes the newest slot wait as `pending`; it fires when the session is idle, and any slot
 *   that comes due meanwhile supersedes it (coalescing).
 * - A one-shot whose nominal time passed before this scheduler started was missed while down: it waits for
 *   a person. One due early (jitter) whose nominal time is still ahead fires.
 * - A one-shot, or a recurring job's final slot (its first at or after expiry), removes the job once fired.
 */
export function decide(job: CronJob, sessionBusy: boolean, ctx: DecideContext): SlotTransition | null {
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

  const waiting =
    job.pendingSlotAt !== null
      ? { slotAt: job.pendingSlotAt, final: job.pendingFinal, coalesced: job.pendingCoalesced }
      : null;
  const due: Due = dueNow
    ? collectDue(job, current, waiting, ctx)
    : { pending: waiting, coalesce: [], missed: null, next: current, finalPassed: false, fireDueAt: null };
  const { coalesce, missed, next, finalPassed, fireDueAt } = due;
  let { pending } = due;

  let fire: SlotTransition['fire'] = null;
  let remove = finalPassed && !pending;
  if (pending && !sessionBusy) {
    fire = { slotAt: pending.slotAt, runId: ctx.newRunId(), dueAt: fireDueAt };
    remove = pending.final || !job.recurring;
    pending = null;
  }
  return { coalesce, missed, fire, pending, next, remove };
}

type Pending = { slotAt: number; final: boolean; coalesced: number };

/** The slots that came due, walked: what waits to fire, what it supersedes, what was missed, what is next. */
interface Due {
  pending: Pending | null;
  coalesce: number[];
  missed: SlotTransition['missed'];
  next: NextFire | null;
  /** The job's final slot (or its one-shot) is among them. */
  finalPassed: boolean;
  /** When the slot that waits to fire came due. */
  fireDueAt: number | null;
}

function collectDue(
  job: CronJob,
  current: NextFire | null,
  waiting: Pending | null,
  ctx: DecideContext,
): Due {
  let pending = waiting;
  const coalesce: number[] = [];
  let missed: SlotTransition['missed'] = null;
  let finalPassed = false;
  let fireDueAt: number | null = null;
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
      // Each newer slot supersedes the one waiting: idle-only firing coalesces.
      if (pending) coalesce.push(pending.slotAt);
      pending = {
        slotAt: slot.nominalAt,
        final: slot.final,
        coalesced: pending ? pending.coalesced + 1 : 0,
      };
      fireDueAt = slot.dueAt;
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
  // The job's last slot went by as missed, but an earlier one still waits: that one is now the last.
  if (finalPassed && pending) pending.final = true;
  return { pending, coalesce, missed, next: slot, finalPassed, fireDueAt };
}
