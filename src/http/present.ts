import type { CronJob, Run, Session, SlotRecord } from '../store/types.js';

// Domain records to their JSON form: snake_case, ISO-8601 UTC times.

export const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

export const presentSession = (s: Session) => ({
  id: s.id,
  name: s.name,
  workspace: s.workspace,
  owner: s.owner,
  status: s.status,
  defaults: s.defaults,
  created_at: iso(s.createdAt),
  closed_at: iso(s.closedAt),
});

export const presentJob = (j: CronJob) => ({
  id: j.id,
  session_id: j.sessionId,
  cron: j.cron,
  effective_cron: j.effectiveCron,
  timezone: j.timezone,
  recurring: j.recurring,
  approximate: j.approximate,
  prompt: j.prompt,
  options: j.options,
  status: j.status,
  created_by: j.createdBy,
  created_at: iso(j.createdAt),
  expires_at: iso(j.expiresAt),
  next_fire_at: iso(j.nextNominalAt),
  next_fire_jittered_at: iso(j.nextDueAt),
  next_fire_final: j.nextNominalAt === null ? null : j.nextFinal,
  pending_slot_at: iso(j.pendingSlotAt),
  pending_coalesced: j.pendingCoalesced,
  last_slot_at: iso(j.lastSlotAt),
  fire_count: j.fireCount,
});

export const presentRun = (r: Run) => ({
  id: r.id,
  session_id: r.sessionId,
  job_id: r.jobId,
  slot_at: iso(r.slotAt),
  source: r.source,
  phase: r.phase,
  status: r.status,
  prompt: r.prompt,
  requested_by: r.requestedBy,
  coalesced_slots: r.coalescedSlots,
  created_at: iso(r.createdAt),
  started_at: iso(r.startedAt),
  finished_at: iso(r.finishedAt),
  error: r.error,
});

export const presentSlot = (s: SlotRecord) => ({
  slot_at: iso(s.slotAt),
  last_slot_at: iso(s.lastSlotAt),
  slots: s.slots,
  outcome: s.outcome,
  run_id: s.runId,
  recorded_at: iso(s.recordedAt),
});
