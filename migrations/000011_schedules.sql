-- rebuilds tables (triggers: its kind CHECK gains 'schedule'; see src/store/sqlite/migrate.ts)
-- drydock schema, version 11: schedules that last, and run times. A scheduled trigger is a cron schedule that is not tied
-- to a person's session and never expires; the scheduler fires it through a job of its own (trigger_id),
-- with every rule jobs have. A job can be renewed for another expiry period.

CREATE TABLE triggers_v11 (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('github', 'generic', 'schedule')),
  events         TEXT NOT NULL DEFAULT '[]',     -- JSON: ["pull_request.opened", ...] (github)
  filters        TEXT NOT NULL DEFAULT '{}',     -- JSON: repositories, base_branches, labels, authors, draft
  prompt         TEXT NOT NULL,                  -- template; external text never goes into it
  workspace      TEXT,                           -- generic, schedule: the directory runs work in
  options        TEXT NOT NULL DEFAULT '{}',     -- JSON: run options (model, approvals_required, execute_mode, ...)
  hourly_cap     INTEGER NOT NULL,
  token_id       TEXT UNIQUE,                    -- generic: public part of its bearer token
  token_hash     BLOB,                           -- generic: sha256 of the secret part
  enabled        INTEGER NOT NULL DEFAULT 1,
  created_by     TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
INSERT INTO triggers_v11 SELECT id, name, kind, events, filters, prompt, workspace, options, hourly_cap, token_id,
                                token_hash, enabled, created_by, created_at, updated_at
  FROM triggers ORDER BY rowid;
DROP TABLE triggers;
ALTER TABLE triggers_v11 RENAME TO triggers;

-- The scheduled trigger a job fires for (its schedule); NULL for a session's own jobs.
ALTER TABLE cron_jobs ADD COLUMN trigger_id TEXT;
CREATE UNIQUE INDEX cron_jobs_by_trigger ON cron_jobs (trigger_id) WHERE trigger_id IS NOT NULL;
-- Renewals: another expiry period from the time of the renewal.
ALTER TABLE cron_jobs ADD COLUMN renewals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cron_jobs ADD COLUMN renewed_at INTEGER;
ALTER TABLE cron_jobs ADD COLUMN renewed_by TEXT;

-- A run's time spent executing (its turns and tools), summed over its starts; the rest between its first
-- start and its end it waited (for a person, or parked). started_at stays the first start.
ALTER TABLE runs ADD COLUMN active_ms INTEGER NOT NULL DEFAULT 0;
