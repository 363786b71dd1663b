-- drydock schema, version 23: what a slot can become widens with the operators' controls: `capped` (a spend
-- cap stopped it), `skipped` and `buffered` (the job's overlap policy), `canceled` (it was superseded by
-- cancel_other). SQLite cannot alter a CHECK constraint: the table is rebuilt (no other table refers to it).

CREATE TABLE job_slots_v23 (
  job_id       TEXT NOT NULL,
  slot_at      INTEGER NOT NULL,
  last_slot_at INTEGER NOT NULL,
  slots        INTEGER NOT NULL,
  outcome      TEXT NOT NULL CHECK (outcome IN
                 ('fired', 'coalesced', 'missed', 'capped', 'skipped', 'buffered', 'canceled')),
  run_id       TEXT,
  recorded_at  INTEGER NOT NULL,
  PRIMARY KEY (job_id, slot_at)
);
INSERT INTO job_slots_v23 SELECT job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at FROM job_slots;
DROP TABLE job_slots;
ALTER TABLE job_slots_v23 RENAME TO job_slots;
