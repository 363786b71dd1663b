import type { SessionRun, SlotTransition } from '../domain/slot-transition.js';
import type { CronJob } from '../domain/types.js';
import type { NextFire } from './next-fire.js';

// A job's overlap policy: what the slots that arrive (came due, or were backfilled) become, given whether its
// session is busy. The "Overlap policies" table of docs/scheduling.md says the same in words; keep the two together.

/** A slot that came due (or was backfilled), oldest first. */
export interface Arrival {
  slotAt: number;
  /** The job's last slot. */
  final: boolean;
  /** Its jittered due time (null for a backfilled slot), for lateness figures when it fires at once. */
  dueAt: number | null;
}

/** The slots that came due, walked: which arrive (oldest first), what was missed, what is next. */
export interface Due {
  arrivals: Arrival[];
  missed: SlotTransition['missed'];
  next: NextFire | null;
  /** The job's final slot (or its one-shot) is among them. */
  finalPassed: boolean;
}

export interface OverlapContext {
  newRunId: () => string;
  /** `buffer_all`: the most slots one job holds waiting; past it the oldest waiting one is skipped. */
  maxBuffered: number;
}

export interface SessionState {
  busy: boolean;
  runs: readonly SessionRun[];
}

type Pending = NonNullable<SlotTransition['pending']>;

/** The transition the job's policy makes of the slots that arrived. Pure. */
export function applyOverlap(
  job: CronJob,
  session: SessionState,
  due: Due,
  ctx: OverlapContext,
): SlotTransition {
  const arrived = due.arrivals.length > 0;
  switch (job.overlap) {
    case 'buffer_all':
      return bufferAll(job, session.busy, due, ctx);
    case 'skip':
      return session.busy && arrived ? skipArrivals(job, due) : bufferOne(job, session.busy, due, ctx);
    case 'allow_all':
      // Fired whatever the session is doing: the run queues behind the session's current one.
      return bufferOne(job, false, due, ctx);
    case 'cancel_other': {
      const own = session.busy && arrived ? ownRuns(job, session.runs) : null;
      // A run the job did not start (a person's) is not canceled: the slot waits, as under buffer_one.
      return own
        ? { ...bufferOne(job, false, due, ctx), cancel: own }
        : bufferOne(job, session.busy, due, ctx);
    }
    default:
      return bufferOne(job, session.busy, due, ctx);
  }
}

/**
 * The runs keeping the session busy when every one of them is this job's own: a slot's run, fired by its
 * schedule or a backfill (it holds its slot). The execution of an approved plan and a revision round carry
 * the job and its source too but no slot: they are a person's decision, never canceled by a later slot, so
 * with one of them (or any other run) among them this is null and the slot waits.
 */
function ownRuns(
  job: CronJob,
  runs: readonly SessionRun[],
): { runId: string; slotAt: number | null }[] | null {
  const ownSlot = (r: SessionRun) => r.jobId === job.id && r.source === 'schedule' && r.slotAt !== null;
  if (!runs.length || !runs.every(ownSlot)) return null;
  return runs.map((r) => ({ runId: r.id, slotAt: r.slotAt }));
}

const waitingOf = (job: CronJob): Pending | null =>
  job.pendingSlotAt !== null
    ? { slotAt: job.pendingSlotAt, final: job.pendingFinal, coalesced: job.pendingCoalesced }
    : null;

/**
 * `buffer_one`, the default (and drydock's behaviour before overlap policies): each slot that arrives
 * supersedes the one waiting (which is recorded coalesced, linked to the run that fires); what waits fires when
 * the session is idle.
 */
function bufferOne(job: CronJob, busy: boolean, due: Due, ctx: OverlapContext): SlotTransition {
  let pending = waitingOf(job);
  const coalesce: number[] = [];
  let fireDueAt: number | null = null;
  for (const a of due.arrivals) {
    // Only a newer slot supersedes the one waiting: a backfilled older one is folded into it instead.
    if (pending && a.slotAt < pending.slotAt) {
      coalesce.push(a.slotAt);
      pending = { ...pending, coalesced: pending.coalesced + 1 };
      continue;
    }
    if (pending) coalesce.push(pending.slotAt);
    pending = { slotAt: a.slotAt, final: a.final, coalesced: pending ? pending.coalesced + 1 : 0 };
    fireDueAt = a.dueAt;
  }
  // The job's last slot went by as missed, but an earlier one still waits: that one is now the last.
  if (due.finalPassed && pending) pending.final = true;
  let fire: SlotTransition['fire'] = null;
  let remove = due.finalPassed && !pending;
  if (pending && !busy) {
    fire = { slotAt: pending.slotAt, runId: ctx.newRunId(), dueAt: fireDueAt };
    remove = pending.final || !job.recurring;
    pending = null;
  }
  return { coalesce, missed: due.missed, fire, pending, next: due.next, remove };
}

/** `skip` while the session is busy: every slot that arrived is dropped; whatever waited before stays. */
function skipArrivals(job: CronJob, due: Due): SlotTransition {
  const pending = waitingOf(job);
  if (due.finalPassed && pending) pending.final = true;
  return {
    coalesce: [],
    missed: due.missed,
    fire: null,
    pending,
    skip: due.arrivals.map((a) => a.slotAt),
    next: due.next,
    remove: due.finalPassed && !pending,
  };
}

/**
 * `buffer_all`: every slot that arrives waits its turn (recorded buffered); the oldest waiting fires when the
 * session is idle, one per pass (its run makes the session busy). Past `maxBuffered` waiting, the oldest are
 * dropped (recorded skipped): the newest slots are the ones worth running.
 */
function bufferAll(job: CronJob, busy: boolean, due: Due, ctx: OverlapContext): SlotTransition {
  const queue =
    job.pendingSlotAt !== null ? [job.pendingSlotAt, ...job.bufferedSlots] : [...job.bufferedSlots];
  let final = job.pendingSlotAt !== null && job.pendingFinal;
  const fresh = new Set<number>();
  for (const a of due.arrivals) {
    queue.push(a.slotAt);
    fresh.add(a.slotAt);
    if (a.final) final = true;
  }
  if (due.finalPassed) final = true;
  let fire: SlotTransition['fire'] = null;
  if (!busy && queue.length) {
    const slotAt = queue.shift()!;
    fire = {
      slotAt,
      runId: ctx.newRunId(),
      dueAt: due.arrivals.find((a) => a.slotAt === slotAt)?.dueAt ?? null,
    };
  }
  const skip = queue.length > ctx.maxBuffered ? queue.splice(0, queue.length - ctx.maxBuffered) : [];
  const pending = queue.length ? { slotAt: queue[0]!, final, coalesced: 0 } : null;
  return {
    coalesce: [],
    missed: due.missed,
    fire,
    pending,
    queue: queue.slice(1),
    buffer: queue.filter((s) => fresh.has(s)),
    skip,
    next: due.next,
    remove: !pending && (fire ? final || !job.recurring : due.finalPassed),
  };
}
