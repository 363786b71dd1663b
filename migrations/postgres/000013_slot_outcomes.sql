-- drydock schema (PostgreSQL), version 13: what a slot can become widens with the operators' controls:
-- `capped` (a spend cap stopped it), `skipped` and `buffered` (the job's overlap policy), `canceled`
-- (superseded by cancel_other).

ALTER TABLE job_slots DROP CONSTRAINT job_slots_outcome_check;
ALTER TABLE job_slots ADD CONSTRAINT job_slots_outcome_check CHECK (outcome IN
  ('fired', 'coalesced', 'missed', 'capped', 'skipped', 'buffered', 'canceled'));
