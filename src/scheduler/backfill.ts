import { DomainError } from '../domain/errors.js';
import type { CronJob, SlotOutcome } from '../domain/types.js';
import { nextMatch } from './cron.js';

// Backfill (POST /v1/jobs/:id/backfill): the slots of a past time range, each offered to its job once, as if
// it came due now (decide.ts, decideBackfill; the store's backfillJob). This module owns the range's rules:
// which slots it holds, and the refusals.

/** How many slots past the limit are counted before the count is given as "more than". */
const COUNT_BEYOND = 10_000;

export interface BackfillRange {
  from: number;
  to: number;
}

/**
 * The job's nominal slots in [from, to), oldest first, under its effective expression and zone. Refused
 * (invalid_request) unless from < to <= now, for a one-shot (it has one slot: run it), and when the range
 * holds more than `limit` slots (the message names the limit and the count).
 */
export function backfillSlots(job: CronJob, range: BackfillRange, now: number, limit: number): number[] {
  const { from, to } = range;
  if (!(from < to)) throw invalid(`backfill: from (${iso(from)}) must be before to (${iso(to)})`);
  if (to > now) throw invalid(`backfill: to (${iso(to)}) is in the future; slots to come fire on schedule`);
  if (!job.recurring) {
    throw invalid(`backfill: job ${job.id} is a one-shot; run it (POST /v1/jobs/${job.id}/run)`);
  }
  const slots: number[] = [];
  let t = nextMatch(job.effectiveCron, job.timezone, from - 1);
  while (t !== null && t < to && slots.length <= limit + COUNT_BEYOND) {
    slots.push(t);
    t = nextMatch(job.effectiveCron, job.timezone, t);
  }
  if (slots.length > limit) {
    const count =
      slots.length > limit + COUNT_BEYOND ? `more than ${limit + COUNT_BEYOND}` : `${slots.length}`;
    throw invalid(
      `backfill: the range holds ${count} slots, over the limit of ${limit} (scheduler.max_backfill_slots); ask for a shorter range`,
    );
  }
  return slots;
}

/** What a backfilled slot became, as the response lists it. */
export type BackfillOutcome = SlotOutcome | 'pending' | 'already_done';

export interface BackfilledSlot {
  slotAt: number;
  outcome: BackfillOutcome;
  runId: string | null;
}

const invalid = (message: string) => new DomainError('invalid_request', message);
const iso = (t: number) => new Date(t).toISOString();
