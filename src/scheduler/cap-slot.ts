import type { SpendSnapshot } from '../caps/spend-caps.js';
import type { SpendCapHit } from '../domain/spend.js';
import type { CronJob } from '../domain/types.js';
import type { SlotTransition } from '../store/store.js';

/**
 * A decision with the spend caps applied: a slot that would fire while the job's trigger, session or the
 * daemon is past a cap is recorded `capped` instead, and the job moves on as if it had fired (a one-shot
 * waits as missed instead of being removed). Pure and
 * synchronous (it runs inside the store's transaction); the cap met is kept in `hits` for the note after.
 */
export function capSlot(
  job: CronJob,
  t: SlotTransition | null,
  spend: SpendSnapshot | null,
  hits: Map<string, SpendCapHit>,
): SlotTransition | null {
  if (!t?.fire || !spend) return t;
  const subject = { sessionId: job.sessionId, triggerId: job.triggerId };
  const hit = spend.hitFor(subject);
  if (!hit) {
    // Counted at once: a later job of the same batch sees this run (daily_runs).
    spend.count(subject);
    return t;
  }
  hits.set(job.id, hit);
  // A capped slot starts nothing, so under cancel_other it cancels nothing either: the run going keeps going.
  const { cancel: _notCanceled, ...rest } = t;
  const capped = { ...rest, fire: null, capped: { slotAt: t.fire.slotAt } };
  if (job.recurring) return capped;
  // A one-shot is not thrown away by a cap: it waits for a person as a one-shot missed while down does
  // (`drydock jobs run` fires its slot once).
  const slot = { nominalAt: t.fire.slotAt, dueAt: t.fire.slotAt, final: true };
  return { ...capped, next: slot, status: 'missed', remove: false };
}
