-- drydock schema (PostgreSQL), version 16: a job's overlap policy (what a slot due while its session is busy
-- becomes), its own jitter cap, and the queue of `buffer_all` (the slots waiting behind pending_slot_at, a
-- JSON array of ms, oldest first; each also has a `buffered` row in job_slots). Existing jobs keep today's
-- behaviour: buffer_one.

ALTER TABLE cron_jobs ADD COLUMN overlap text NOT NULL DEFAULT 'buffer_one'
  CHECK (overlap IN ('skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'));
ALTER TABLE cron_jobs ADD COLUMN jitter_max_seconds integer CHECK (jitter_max_seconds >= 0);
ALTER TABLE cron_jobs ADD COLUMN buffered_slots json NOT NULL DEFAULT '[]';
