-- drydock schema, version 4: remote triggers (GitHub webhooks, the generic fire endpoint) and deliveries.

CREATE TABLE triggers (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('github', 'generic')),
  events         TEXT NOT NULL DEFAULT '[]',     -- JSON: ["pull_request.opened", ...] (github)
  filters        TEXT NOT NULL DEFAULT '{}',     -- JSON: repositories, base_branches, labels, authors, draft
  prompt         TEXT NOT NULL,                  -- template; external text never goes into it
  workspace      TEXT,                           -- generic: the directory runs work in
  options        TEXT NOT NULL DEFAULT '{}',     -- JSON: run options (model, approvals_required, execute_mode, ...)
  hourly_cap     INTEGER NOT NULL,
  token_id       TEXT UNIQUE,                    -- generic: public part of its bearer token
  token_hash     BLOB,                           -- generic: sha256 of the secret part
  enabled        INTEGER NOT NULL DEFAULT 1,
  created_by     TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);

-- Every webhook delivery and fire received, with what became of it. The unique key deduplicates
-- redeliveries (X-GitHub-Delivery) and repeated fires (the trigger's idempotency key).
CREATE TABLE deliveries (
  id           TEXT PRIMARY KEY,
  source       TEXT NOT NULL CHECK (source IN ('github', 'fire')),
  key          TEXT NOT NULL,
  event        TEXT NOT NULL,
  trigger_id   TEXT,
  outcome      TEXT NOT NULL CHECK (outcome IN ('accepted', 'duplicate', 'filtered', 'capped', 'rejected', 'ignored')),
  detail       TEXT,
  subject      TEXT,                            -- e.g. owner/repo#12
  run_ids      TEXT NOT NULL DEFAULT '[]',
  received_at  INTEGER NOT NULL,
  UNIQUE (source, key)
);
CREATE INDEX deliveries_by_time ON deliveries (received_at);

-- Which trigger fired for which delivery: the hourly cap counts these.
CREATE TABLE trigger_fires (
  trigger_id  TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  outcome     TEXT NOT NULL CHECK (outcome IN ('accepted', 'filtered', 'capped')),
  run_id      TEXT,
  at          INTEGER NOT NULL,
  PRIMARY KEY (trigger_id, delivery_id)
);
CREATE INDEX trigger_fires_recent ON trigger_fires (trigger_id, outcome, at);

-- Trigger runs get a session per subject (a pull request, or the trigger itself), found by its key.
ALTER TABLE sessions ADD COLUMN scope_key TEXT;
CREATE UNIQUE INDEX sessions_by_scope ON sessions (scope_key) WHERE scope_key IS NOT NULL;

ALTER TABLE runs ADD COLUMN trigger_id TEXT;
ALTER TABLE runs ADD COLUMN delivery_id TEXT;
ALTER TABLE runs ADD COLUMN subject TEXT;
-- A pull request run works in a worktree at the PR's head: prepared when the run starts.
ALTER TABLE runs ADD COLUMN checkout TEXT;      -- JSON: {repository, clone, head_sha, head_ref, base_ref, number}

ALTER TABLE plans ADD COLUMN subject TEXT;
CREATE INDEX plans_by_subject ON plans (subject, status) WHERE subject IS NOT NULL;
