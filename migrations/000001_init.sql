-- drydock schema, version 1: tokens, sessions, cron jobs, their slots, runs.
-- Times are integer milliseconds since the epoch (UTC).

CREATE TABLE api_tokens (
  id          TEXT PRIMARY KEY,          -- public part of the token, used to look it up
  name        TEXT NOT NULL,
  identity    TEXT NOT NULL,
  role        TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'approver', 'viewer')),
  secret_hash BLOB NOT NULL,             -- sha256 of the secret part; the secret itself is never stored
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER
);

CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  workspace   TEXT NOT NULL,
  owner       TEXT NOT NULL,
  defaults    TEXT NOT NULL,             -- JSON: model, thinking, budget, approvals, execute mode
  status      TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  created_at  INTEGER NOT NULL,
  closed_at   INTEGER
);
CREATE INDEX sessions_by_status ON sessions (status, created_at);

-- A cron job lives here while it is active; it is deleted when its session closes, when a one-shot
-- fires, or after a recurring job's final fire. Its history stays in runs and job_slots.
CREATE TABLE cron_jobs (
  id               TEXT PRIMARY KEY,
  session_id       TEXT NOT NULL REFERENCES sessions (id),
  cron             TEXT NOT NULL,        -- as given (normalized)
  effective_cron   TEXT NOT NULL,        -- after the approximate-minute shift
  timezone         TEXT NOT NULL,
  prompt           TEXT NOT NULL,
  recurring        INTEGER NOT NULL,
  approximate      INTEGER NOT NULL,
  options          TEXT NOT NULL,        -- JSON: per-job overrides of session defaults
  status           TEXT NOT NULL CHECK (status IN ('active', 'paused', 'missed')),
  created_by       TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  expires_at       INTEGER,              -- recurring only
  next_nominal_at  INTEGER,              -- next slot (cron match); NULL when no slot is left
  next_due_at      INTEGER,              -- next slot with jitter applied: when the scheduler acts
  next_final       INTEGER NOT NULL DEFAULT 0,
  pending_slot_at  INTEGER,              -- a slot that came due while the session was busy
  pending_first_at INTEGER,              -- earliest slot folded into the pending one
  pending_count    INTEGER NOT NULL DEFAULT 0,
  pending_final    INTEGER NOT NULL DEFAULT 0,
  last_slot_at     INTEGER,
  fire_count       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX cron_jobs_by_session ON cron_jobs (session_id);
CREATE INDEX cron_jobs_due ON cron_jobs (next_due_at) WHERE status = 'active' AND next_due_at IS NOT NULL;
CREATE INDEX cron_jobs_pending ON cron_jobs (session_id) WHERE pending_slot_at IS NOT NULL;

-- What became of every slot: fired (one run), coalesced into a later fire, or missed during downtime.
-- A row may cover a range of slots (first slot_at .. last_slot_at, slots = how many).
CREATE TABLE job_slots (
  job_id       TEXT NOT NULL,
  slot_at      INTEGER NOT NULL,
  last_slot_at INTEGER NOT NULL,
  slots        INTEGER NOT NULL,
  outcome      TEXT NOT NULL CHECK (outcome IN ('fired', 'coalesced', 'missed')),
  run_id       TEXT,
  recorded_at  INTEGER NOT NULL,
  PRIMARY KEY (job_id, slot_at)
);

CREATE TABLE runs (
  id              TEXT PRIMARY KEY,
  session_id      TEXT NOT NULL REFERENCES sessions (id),
  job_id          TEXT,                  -- no foreign key: jobs are deleted, their runs stay
  slot_at         INTEGER,               -- nominal fire time for scheduled runs
  source          TEXT NOT NULL CHECK (source IN ('schedule', 'manual', 'delivery')),
  phase           TEXT NOT NULL CHECK (phase IN ('plan', 'execute')),
  status          TEXT NOT NULL CHECK (status IN ('queued', 'running', 'awaiting_input', 'planned', 'completed',
                                                  'failed', 'canceled', 'budget_exceeded', 'interrupted')),
  prompt          TEXT NOT NULL,
  requested_by    TEXT NOT NULL,
  coalesced_slots INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,
  started_at      INTEGER,
  finished_at     INTEGER,
  error           TEXT
);
-- Exactly one run per (job, slot): a crash, a restart or a second scheduler cannot double a slot.
CREATE UNIQUE INDEX runs_one_per_slot ON runs (job_id, slot_at) WHERE job_id IS NOT NULL AND slot_at IS NOT NULL;
CREATE INDEX runs_active_by_session ON runs (session_id) WHERE status IN ('queued', 'running', 'awaiting_input');
CREATE INDEX runs_by_created ON runs (created_at);

CREATE TABLE scheduler_state (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
