-- drydock schema, version 2: agent runs: conversations, event logs, questions, plans, usage and cost.

ALTER TABLE runs ADD COLUMN conversation_id TEXT;
ALTER TABLE runs ADD COLUMN model TEXT;
ALTER TABLE runs ADD COLUMN overrides TEXT NOT NULL DEFAULT '{}';  -- JSON: the job's (or trigger's) run options
ALTER TABLE runs ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';   -- JSON: resolved model, thinking, budget, limits
ALTER TABLE runs ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN usage TEXT NOT NULL DEFAULT '{}';      -- JSON: tokens by kind
ALTER TABLE runs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN plan_id TEXT;
ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;    -- a run cut off by a crash is retried once
CREATE INDEX runs_by_status ON runs (status, created_at);

-- The conversation with the model, one row per message, appended after every turn. A revision round or
-- the execute phase continues the same conversation in a new run.
CREATE TABLE conversation_messages (
  conversation_id TEXT NOT NULL,
  seq             INTEGER NOT NULL,
  role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content         TEXT NOT NULL,                  -- JSON array of content blocks, exactly as exchanged
  run_id          TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (conversation_id, seq)
);

-- Append-only event log per run; seq numbers are the SSE event ids.
CREATE TABLE run_events (
  run_id TEXT NOT NULL,
  seq    INTEGER NOT NULL,
  type   TEXT NOT NULL,
  data   TEXT NOT NULL,
  at     INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE questions (
  id              TEXT PRIMARY KEY,
  run_id          TEXT NOT NULL REFERENCES runs (id),
  session_id      TEXT NOT NULL,
  tool_use_id     TEXT NOT NULL,
  questions       TEXT NOT NULL,                  -- JSON: the AskUserQuestion input
  status          TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'timed_out', 'canceled')),
  answers         TEXT,                           -- JSON: question text -> label or labels
  answered_by     TEXT,
  prior_results   TEXT NOT NULL DEFAULT '[]',     -- JSON: tool results of the same turn gathered before parking
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER NOT NULL,
  resolved_at     INTEGER,
  UNIQUE (run_id, tool_use_id)
);
CREATE INDEX questions_pending ON questions (expires_at) WHERE status = 'pending';

CREATE TABLE plans (
  id                TEXT PRIMARY KEY,
  run_id            TEXT NOT NULL REFERENCES runs (id),
  session_id        TEXT NOT NULL,
  conversation_id   TEXT NOT NULL,
  tool_use_id       TEXT NOT NULL,
  markdown          TEXT NOT NULL,
  sha256            TEXT NOT NULL,
  workspace_commit  TEXT,
  status            TEXT NOT NULL CHECK (status IN ('pending_approval', 'approved', 'executing', 'executed',
                                                    'execution_failed', 'rejected', 'revision_requested',
                                                    'expired', 'superseded')),
  round             INTEGER NOT NULL DEFAULT 1,
  previous_plan_id  TEXT,
  requested_by      TEXT NOT NULL,
  created_at        INTEGER NOT NULL,
  UNIQUE (run_id, tool_use_id)
);
CREATE INDEX plans_by_status ON plans (status, created_at);
