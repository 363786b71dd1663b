-- drydock schema, version 3: the plan queue: decisions, the execute phase, tool approvals.

-- What the plan was proposed under, copied from its job (or trigger) and session when it was captured,
-- so later changes to either do not move the goalposts of a plan already in the queue.
ALTER TABLE plans ADD COLUMN job_id TEXT;
ALTER TABLE plans ADD COLUMN trigger_id TEXT;
ALTER TABLE plans ADD COLUMN source TEXT NOT NULL DEFAULT 'manual';
ALTER TABLE plans ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE plans ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1;
ALTER TABLE plans ADD COLUMN allow_self_approval INTEGER NOT NULL DEFAULT 0;
ALTER TABLE plans ADD COLUMN execute_mode TEXT NOT NULL DEFAULT 'manual';
ALTER TABLE plans ADD COLUMN owner TEXT NOT NULL DEFAULT '';         -- the session owner: also a requester
ALTER TABLE plans ADD COLUMN decided_at INTEGER;
ALTER TABLE plans ADD COLUMN failure_reason TEXT;
CREATE INDEX plans_queue ON plans (status, created_at, id);
CREATE INDEX plans_by_session ON plans (session_id, status, created_at);
CREATE INDEX plans_by_job ON plans (job_id, status, created_at) WHERE job_id IS NOT NULL;

CREATE TABLE decisions (
  id         TEXT PRIMARY KEY,
  plan_id    TEXT NOT NULL REFERENCES plans (id),
  kind       TEXT NOT NULL CHECK (kind IN ('approve', 'reject', 'revise')),
  identity   TEXT NOT NULL,
  comment    TEXT,
  sha256     TEXT NOT NULL,                -- the plan text the person saw
  created_at INTEGER NOT NULL
);
CREATE INDEX decisions_by_plan ON decisions (plan_id, created_at);
-- Quorum counts distinct people: one approval per identity per plan.
CREATE UNIQUE INDEX decisions_one_approval ON decisions (plan_id, identity) WHERE kind = 'approve';

-- A plan-phase run made for a revision round names the plan it revises; an execute run names its plan.
ALTER TABLE runs ADD COLUMN revises_plan_id TEXT;
ALTER TABLE runs ADD COLUMN executes_plan_id TEXT;
ALTER TABLE runs ADD COLUMN execute_mode TEXT;
ALTER TABLE runs ADD COLUMN result_commit TEXT;
ALTER TABLE runs ADD COLUMN diff_stat TEXT;
ALTER TABLE runs ADD COLUMN changed_files TEXT;                       -- JSON array of workspace paths
-- At most one execute run per plan, whatever races happen above.
CREATE UNIQUE INDEX runs_one_execute_per_plan ON runs (executes_plan_id) WHERE executes_plan_id IS NOT NULL;

CREATE TABLE tool_approvals (
  id            TEXT PRIMARY KEY,
  run_id        TEXT NOT NULL REFERENCES runs (id),
  session_id    TEXT NOT NULL,
  plan_id       TEXT,
  tool_use_id   TEXT NOT NULL,
  tool          TEXT NOT NULL,
  input         TEXT NOT NULL,              -- JSON: what the model asked to run
  status        TEXT NOT NULL CHECK (status IN ('pending', 'allowed', 'denied', 'timed_out', 'canceled')),
  message       TEXT,                       -- the decider's words, read by the model
  decided_by    TEXT,
  prior_results TEXT NOT NULL DEFAULT '[]',
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  decided_at    INTEGER,
  UNIQUE (run_id, tool_use_id)
);
CREATE INDEX tool_approvals_pending ON tool_approvals (expires_at) WHERE status = 'pending';
