-- rebuilds tables (runs: its status CHECK gains 'refused'; see src/store/sqlite/migrate.ts)
-- drydock schema, version 10: the per-model request contract. A run the model refused ends `refused`; an
-- assistant message keeps the stop reason it ended with (a `pause_turn` is resent, a `max_tokens` cut is
-- never executed, also after a restart); stored thinking options move to off | adaptive | {budget_tokens}.

CREATE TABLE runs_v10 (
  id              TEXT PRIMARY KEY,
  session_id      TEXT NOT NULL REFERENCES sessions (id),
  job_id          TEXT,                  -- no foreign key: jobs are deleted, their runs stay
  slot_at         INTEGER,               -- nominal fire time for scheduled runs
  source          TEXT NOT NULL CHECK (source IN ('schedule', 'manual', 'delivery')),
  phase           TEXT NOT NULL CHECK (phase IN ('plan', 'execute')),
  status          TEXT NOT NULL CHECK (status IN ('queued', 'running', 'awaiting_input', 'planned', 'completed',
                                                  'failed', 'canceled', 'budget_exceeded', 'interrupted',
                                                  'refused')),
  prompt          TEXT NOT NULL,
  requested_by    TEXT NOT NULL,
  coalesced_slots INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,
  started_at      INTEGER,
  finished_at     INTEGER,
  error           TEXT,
  conversation_id TEXT,
  model           TEXT,
  overrides       TEXT NOT NULL DEFAULT '{}',
  settings        TEXT NOT NULL DEFAULT '{}',
  turns           INTEGER NOT NULL DEFAULT 0,
  usage           TEXT NOT NULL DEFAULT '{}',
  cost_usd        REAL NOT NULL DEFAULT 0,
  plan_id         TEXT,
  attempt         INTEGER NOT NULL DEFAULT 1,
  revises_plan_id TEXT,
  executes_plan_id TEXT,
  execute_mode    TEXT,
  result_commit   TEXT,
  diff_stat       TEXT,
  changed_files   TEXT,
  trigger_id      TEXT,
  delivery_id     TEXT,
  subject         TEXT,
  checkout        TEXT
);
INSERT INTO runs_v10 (id, session_id, job_id, slot_at, source, phase, status, prompt, requested_by,
                      coalesced_slots, created_at, started_at, finished_at, error, conversation_id, model,
                      overrides, settings, turns, usage, cost_usd, plan_id, attempt, revises_plan_id,
                      executes_plan_id, execute_mode, result_commit, diff_stat, changed_files, trigger_id,
                      delivery_id, subject, checkout)
  SELECT id, session_id, job_id, slot_at, source, phase, status, prompt, requested_by, coalesced_slots,
         created_at, started_at, finished_at, error, conversation_id, model, overrides, settings, turns, usage,
         cost_usd, plan_id, attempt, revises_plan_id, executes_plan_id, execute_mode, result_commit, diff_stat,
         changed_files, trigger_id, delivery_id, subject, checkout
  FROM runs ORDER BY rowid;
DROP TABLE runs;
ALTER TABLE runs_v10 RENAME TO runs;
CREATE UNIQUE INDEX runs_one_per_slot ON runs (job_id, slot_at) WHERE job_id IS NOT NULL AND slot_at IS NOT NULL;
CREATE INDEX runs_active_by_session ON runs (session_id) WHERE status IN ('queued', 'running', 'awaiting_input');
CREATE INDEX runs_by_created ON runs (created_at);
CREATE INDEX runs_by_status ON runs (status, created_at);
CREATE UNIQUE INDEX runs_one_execute_per_plan ON runs (executes_plan_id) WHERE executes_plan_id IS NOT NULL;

ALTER TABLE conversation_messages ADD COLUMN stop_reason TEXT;

-- The execute phase is now a conversation of its own: an execute run that has not started yet no longer
-- continues its plan's conversation (one that has started keeps the conversation it began).
UPDATE runs SET conversation_id = NULL
  WHERE phase = 'execute' AND status = 'queued'
    AND NOT EXISTS (SELECT 1 FROM conversation_messages m WHERE m.run_id = runs.id);

-- {"enabled": false} -> "off"; {"enabled": true, "budget_tokens": N} -> {"budget_tokens": N};
-- {"enabled": true} -> "adaptive".
UPDATE sessions SET defaults = json_set(defaults, '$.thinking',
    CASE WHEN json_extract(defaults, '$.thinking.enabled') = 0 THEN 'off'
         WHEN json_extract(defaults, '$.thinking.budget_tokens') IS NOT NULL
           THEN json_object('budget_tokens', json_extract(defaults, '$.thinking.budget_tokens'))
         ELSE 'adaptive' END)
  WHERE json_type(defaults, '$.thinking.enabled') IS NOT NULL;
UPDATE cron_jobs SET options = json_set(options, '$.thinking',
    CASE WHEN json_extract(options, '$.thinking.enabled') = 0 THEN 'off'
         WHEN json_extract(options, '$.thinking.budget_tokens') IS NOT NULL
           THEN json_object('budget_tokens', json_extract(options, '$.thinking.budget_tokens'))
         ELSE 'adaptive' END)
  WHERE json_type(options, '$.thinking.enabled') IS NOT NULL;
UPDATE triggers SET options = json_set(options, '$.thinking',
    CASE WHEN json_extract(options, '$.thinking.enabled') = 0 THEN 'off'
         WHEN json_extract(options, '$.thinking.budget_tokens') IS NOT NULL
           THEN json_object('budget_tokens', json_extract(options, '$.thinking.budget_tokens'))
         ELSE 'adaptive' END)
  WHERE json_type(options, '$.thinking.enabled') IS NOT NULL;
UPDATE runs SET overrides = json_set(overrides, '$.thinking',
    CASE WHEN json_extract(overrides, '$.thinking.enabled') = 0 THEN 'off'
         WHEN json_extract(overrides, '$.thinking.budget_tokens') IS NOT NULL
           THEN json_object('budget_tokens', json_extract(overrides, '$.thinking.budget_tokens'))
         ELSE 'adaptive' END)
  WHERE json_type(overrides, '$.thinking.enabled') IS NOT NULL;
