-- drydock schema for PostgreSQL, version 1: the end state of the SQLite migrations (migrations/0000*.sql, up
-- to 000013) in PostgreSQL types. The SQLite history (rebuilt tables, backfills) has no counterpart here: a
-- PostgreSQL database starts at this state.
--
-- Conventions, the same as the SQLite schema's so that both backends share one row mapping:
-- - Times are bigint milliseconds since the epoch (UTC).
-- - JSON columns are `json`, which keeps the exact text written (key order, spacing); `jsonb` would reorder
--   keys and refuse \u0000, and no query here needs its indexing.
-- - Ids compare bytewise (COLLATE "C"), as SQLite compares text, so keyset pages over (created_at, id) are
--   in the same order on both backends whatever the database's collation.
-- - Where SQLite ordered by rowid (the order of arrival), a table has an identity column instead.

CREATE TABLE api_tokens (
  id          text COLLATE "C" PRIMARY KEY,   -- public part of the token, used to look it up
  name        text NOT NULL,
  identity    text NOT NULL,
  role        text NOT NULL CHECK (role IN ('admin', 'operator', 'approver', 'viewer')),
  secret_hash bytea NOT NULL,                 -- sha256 of the secret part; the secret itself is never stored
  created_at  bigint NOT NULL,
  revoked_at  bigint
);
CREATE INDEX api_tokens_by_identity ON api_tokens (identity) WHERE revoked_at IS NULL;

-- Sessions of the approver page (/ui): the cookie carries a random id, only its sha256 is stored. A row
-- outlives its revocation until it expires, then it may be pruned.
CREATE TABLE ui_sessions (
  id_hash     bytea PRIMARY KEY,
  token_id    text COLLATE "C" NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  identity    text NOT NULL,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL,
  revoked_at  bigint
);
CREATE INDEX ui_sessions_by_token ON ui_sessions (token_id);
CREATE INDEX ui_sessions_by_expiry ON ui_sessions (expires_at);

CREATE TABLE sessions (
  id          text COLLATE "C" PRIMARY KEY,
  name        text NOT NULL,
  workspace   text NOT NULL,
  owner       text NOT NULL,
  defaults    json NOT NULL,                  -- model, thinking, budget, approvals, execute mode
  status      text NOT NULL CHECK (status IN ('open', 'closed')),
  created_at  bigint NOT NULL,
  closed_at   bigint,
  scope_key   text                            -- trigger runs: the subject's session, found by this key
);
CREATE INDEX sessions_by_status ON sessions (status, created_at, id);
CREATE INDEX sessions_by_created ON sessions (created_at, id);
CREATE UNIQUE INDEX sessions_by_scope ON sessions (scope_key) WHERE scope_key IS NOT NULL;

-- A cron job lives here while it is active; it is deleted when its session closes, when a one-shot fires, or
-- after a recurring job's final fire. Its history stays in runs and job_slots.
CREATE TABLE cron_jobs (
  id               text COLLATE "C" PRIMARY KEY,
  session_id       text COLLATE "C" NOT NULL REFERENCES sessions (id),
  cron             text NOT NULL,           -- as given (normalized)
  effective_cron   text NOT NULL,           -- after the approximate-minute shift
  timezone         text NOT NULL,
  prompt           text NOT NULL,
  recurring        boolean NOT NULL,
  approximate      boolean NOT NULL,
  options          json NOT NULL,           -- per-job overrides of session defaults
  status           text NOT NULL CHECK (status IN ('active', 'paused', 'missed')),
  created_by       text NOT NULL,
  created_at       bigint NOT NULL,
  expires_at       bigint,                  -- recurring only
  next_nominal_at  bigint,                  -- next slot (cron match); NULL when no slot is left
  next_due_at      bigint,                  -- next slot with jitter applied: when the scheduler acts
  next_final       boolean NOT NULL DEFAULT false,
  pending_slot_at  bigint,                  -- a slot that came due while the session was busy
  pending_first_at bigint,                  -- earliest slot folded into the pending one
  pending_count    integer NOT NULL DEFAULT 0,
  pending_final    boolean NOT NULL DEFAULT false,
  last_slot_at     bigint,
  fire_count       integer NOT NULL DEFAULT 0,
  trigger_id       text COLLATE "C",        -- the scheduled trigger it fires for; NULL for a session's own jobs
  renewals         integer NOT NULL DEFAULT 0,
  renewed_at       bigint,
  renewed_by       text
);
CREATE INDEX cron_jobs_by_session ON cron_jobs (session_id, created_at, id);
CREATE INDEX cron_jobs_due ON cron_jobs (next_due_at) WHERE status = 'active' AND next_due_at IS NOT NULL;
CREATE INDEX cron_jobs_pending ON cron_jobs (pending_slot_at) WHERE pending_slot_at IS NOT NULL;
CREATE UNIQUE INDEX cron_jobs_by_trigger ON cron_jobs (trigger_id) WHERE trigger_id IS NOT NULL;

-- What became of every slot: fired (one run), coalesced into a later fire, or missed during downtime. A row
-- may cover a range of slots (first slot_at .. last_slot_at, slots = how many).
CREATE TABLE job_slots (
  job_id       text COLLATE "C" NOT NULL,
  slot_at      bigint NOT NULL,
  last_slot_at bigint NOT NULL,
  slots        integer NOT NULL,
  outcome      text NOT NULL CHECK (outcome IN ('fired', 'coalesced', 'missed')),
  run_id       text COLLATE "C",
  recorded_at  bigint NOT NULL,
  PRIMARY KEY (job_id, slot_at)
);
CREATE INDEX job_slots_unlinked ON job_slots (job_id) WHERE outcome = 'coalesced' AND run_id IS NULL;

CREATE TABLE runs (
  id               text COLLATE "C" PRIMARY KEY,
  session_id       text COLLATE "C" NOT NULL REFERENCES sessions (id),
  job_id           text COLLATE "C",        -- no foreign key: jobs are deleted, their runs stay
  slot_at          bigint,                  -- nominal fire time for scheduled runs
  source           text NOT NULL CHECK (source IN ('schedule', 'manual', 'delivery')),
  phase            text NOT NULL CHECK (phase IN ('plan', 'execute')),
  status           text NOT NULL CHECK (status IN ('queued', 'running', 'awaiting_input', 'planned', 'completed',
                                                   'failed', 'canceled', 'budget_exceeded', 'interrupted',
                                                   'refused')),
  prompt           text NOT NULL,
  requested_by     text NOT NULL,
  coalesced_slots  integer NOT NULL DEFAULT 0,
  created_at       bigint NOT NULL,
  started_at       bigint,                  -- the first start: a resumed or retried run keeps it
  finished_at      bigint,
  active_ms        bigint NOT NULL DEFAULT 0, -- time spent executing, summed over its starts
  error            text,
  conversation_id  text COLLATE "C",
  model            text,
  overrides        json NOT NULL DEFAULT '{}', -- the job's (or trigger's) run options
  settings         json NOT NULL DEFAULT '{}', -- resolved model, thinking, budget, limits
  turns            integer NOT NULL DEFAULT 0,
  usage            json NOT NULL DEFAULT '{}', -- tokens by kind
  cost_usd         double precision NOT NULL DEFAULT 0,
  plan_id          text COLLATE "C",
  attempt          integer NOT NULL DEFAULT 1, -- a run cut off by a crash is retried once
  revises_plan_id  text COLLATE "C",        -- a revision round names the plan it revises
  executes_plan_id text COLLATE "C",        -- an execute run names its plan
  execute_mode     text,
  result_commit    text,
  diff_stat        text,
  changed_files    json,                    -- array of workspace paths
  trigger_id       text COLLATE "C",
  delivery_id      text COLLATE "C",
  subject          text,                    -- e.g. owner/repo#12
  checkout         json                     -- {repository, clone, head_sha, head_ref, base_ref, number}
);
-- Exactly one run per (job, slot): a crash, a restart or a second scheduler cannot double a slot.
CREATE UNIQUE INDEX runs_one_per_slot ON runs (job_id, slot_at) WHERE job_id IS NOT NULL AND slot_at IS NOT NULL;
-- At most one execute run per plan, whatever races happen above.
CREATE UNIQUE INDEX runs_one_execute_per_plan ON runs (executes_plan_id) WHERE executes_plan_id IS NOT NULL;
CREATE INDEX runs_active_by_session ON runs (session_id) WHERE status IN ('queued', 'running', 'awaiting_input');
CREATE INDEX runs_active_by_subject ON runs (subject, created_at)
  WHERE subject IS NOT NULL AND status IN ('queued', 'running', 'awaiting_input');
CREATE INDEX runs_by_created ON runs (created_at, id);
CREATE INDEX runs_by_status ON runs (status, created_at, id);
CREATE INDEX runs_by_session ON runs (session_id, created_at, id);
CREATE INDEX runs_by_job ON runs (job_id, created_at, id) WHERE job_id IS NOT NULL;
CREATE INDEX runs_revising ON runs (revises_plan_id) WHERE revises_plan_id IS NOT NULL;
CREATE INDEX runs_by_delivery ON runs (delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX runs_executions_finished ON runs (finished_at) WHERE phase = 'execute' AND finished_at IS NOT NULL;

-- Key-value state of the daemon (the notifier's cursor, ...).
CREATE TABLE scheduler_state (
  key   text PRIMARY KEY,
  value text NOT NULL
);

-- The conversation with the model, one row per message, appended after every turn. A revision round or the
-- execute phase continues the same conversation in a new run.
CREATE TABLE conversation_messages (
  conversation_id text COLLATE "C" NOT NULL,
  seq             integer NOT NULL,
  role            text NOT NULL CHECK (role IN ('user', 'assistant')),
  content         json NOT NULL,            -- array of content blocks, exactly as exchanged
  run_id          text COLLATE "C" NOT NULL,
  created_at      bigint NOT NULL,
  stop_reason     text,                     -- an assistant message's stop reason (pause_turn, max_tokens, ...)
  PRIMARY KEY (conversation_id, seq)
);

-- Append-only event log per run; seq numbers are the SSE event ids. `id` is the event's place in the whole
-- log (SQLite's rowid): appends are serialized (src/store/postgres/runs.ts), so ids become visible in
-- increasing order and a reader that has seen id N will never see a smaller one appear later.
CREATE TABLE run_events (
  id     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  run_id text COLLATE "C" NOT NULL,
  seq    integer NOT NULL,
  type   text NOT NULL,
  data   json NOT NULL,
  at     bigint NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX run_events_by_type ON run_events (type, id);

CREATE TABLE questions (
  id              text COLLATE "C" PRIMARY KEY,
  run_id          text COLLATE "C" NOT NULL REFERENCES runs (id),
  session_id      text COLLATE "C" NOT NULL,
  tool_use_id     text NOT NULL,
  questions       json NOT NULL,            -- the AskUserQuestion input
  status          text NOT NULL CHECK (status IN ('pending', 'answered', 'timed_out', 'canceled')),
  answers         json,                     -- question text -> label or labels
  answered_by     text,
  prior_results   json NOT NULL DEFAULT '[]', -- tool results of the same turn gathered before parking
  created_at      bigint NOT NULL,
  expires_at      bigint NOT NULL,
  resolved_at     bigint,
  UNIQUE (run_id, tool_use_id)
);
CREATE INDEX questions_pending ON questions (expires_at) WHERE status = 'pending';
CREATE INDEX questions_by_created ON questions (created_at, id);

CREATE TABLE plans (
  id                     text COLLATE "C" PRIMARY KEY,
  run_id                 text COLLATE "C" NOT NULL REFERENCES runs (id),
  session_id             text COLLATE "C" NOT NULL,
  conversation_id        text COLLATE "C" NOT NULL,
  tool_use_id            text NOT NULL,
  markdown               text NOT NULL,
  sha256                 text NOT NULL,
  workspace_commit       text,
  status                 text NOT NULL CHECK (status IN ('pending_approval', 'approved', 'executing', 'executed',
                                                         'execution_failed', 'rejected', 'revision_requested',
                                                         'expired', 'superseded')),
  round                  integer NOT NULL DEFAULT 1,
  previous_plan_id       text COLLATE "C",
  requested_by           text NOT NULL,
  created_at             bigint NOT NULL,
  -- What the plan was proposed under, copied from its job (or trigger) and session when it was captured.
  job_id                 text COLLATE "C",
  trigger_id             text COLLATE "C",
  source                 text NOT NULL DEFAULT 'manual',
  expires_at             bigint NOT NULL DEFAULT 0,
  approvals_required     integer NOT NULL DEFAULT 1,
  allow_self_approval    boolean NOT NULL DEFAULT false,
  execute_mode           text NOT NULL DEFAULT 'manual',
  network                boolean NOT NULL DEFAULT false,
  owner                  text NOT NULL DEFAULT '',  -- the session owner: also a requester
  decided_at             bigint,
  failure_reason         text,
  subject                text,
  -- Delivering the executed plan (src/delivery/): NULL until the delivery worker has looked at it; then off,
  -- pending (due at delivery_next_at), retrying, delivered or failed.
  delivery_status        text CHECK (delivery_status IN ('off', 'pending', 'retrying', 'delivered', 'failed')),
  delivery_branch        text,
  delivery_remote        text,              -- the remote's name and URL, never credentials
  delivery_commit        text,
  delivery_pushed_at     bigint,
  delivery_pr_url        text,
  delivery_pr_number     integer,
  delivery_comment_url   text,
  delivery_attempts      integer NOT NULL DEFAULT 0,
  delivery_last_error    text,              -- scrubbed of tokens and URL credentials
  delivery_next_at       bigint,
  delivery_claimed_until bigint,            -- a worker attempting the delivery holds it until then
  delivery_settled_at    bigint,
  UNIQUE (run_id, tool_use_id)
);
CREATE INDEX plans_queue ON plans (status, created_at, id);
CREATE INDEX plans_by_created ON plans (created_at, id);
CREATE INDEX plans_by_session ON plans (session_id, status, created_at);
CREATE INDEX plans_by_job ON plans (job_id, status, created_at) WHERE job_id IS NOT NULL;
CREATE INDEX plans_by_trigger ON plans (trigger_id, status, created_at) WHERE trigger_id IS NOT NULL;
CREATE INDEX plans_by_subject ON plans (subject, status) WHERE subject IS NOT NULL;
CREATE INDEX plans_pending_expiry ON plans (expires_at) WHERE status = 'pending_approval';
CREATE INDEX plans_delivery_undecided ON plans (created_at, id) WHERE status = 'executed' AND delivery_status IS NULL;
CREATE INDEX plans_delivery_due ON plans (delivery_next_at) WHERE delivery_status IN ('pending', 'retrying');

CREATE TABLE decisions (
  id         text COLLATE "C" PRIMARY KEY,
  plan_id    text COLLATE "C" NOT NULL REFERENCES plans (id),
  kind       text NOT NULL CHECK (kind IN ('approve', 'reject', 'revise')),
  identity   text NOT NULL,
  comment    text,
  sha256     text NOT NULL,                 -- the plan text the person saw
  created_at bigint NOT NULL
);
CREATE INDEX decisions_by_plan ON decisions (plan_id, created_at, id);
-- Quorum counts distinct people: one approval per identity per plan.
CREATE UNIQUE INDEX decisions_one_approval ON decisions (plan_id, identity) WHERE kind = 'approve';

-- A counter that moves whenever the plan queue changes (a plan or a decision is written, by any process on
-- this database), so the queue's first page can be served from a cache that is never stale. The counter is
-- moved when the writing transaction commits (a deferred constraint trigger), once per transaction: the
-- row is locked only for the commit itself, never while the transaction waits on other locks, so it cannot
-- take part in a deadlock; and a reader sees the new value together with the write.
CREATE TABLE change_counters (
  name      text PRIMARY KEY,
  value     bigint NOT NULL,
  last_xact xid8                             -- the transaction that moved it last
);
INSERT INTO change_counters (name, value) VALUES ('plans', 0);

CREATE FUNCTION plans_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE change_counters SET value = value + 1, last_xact = pg_current_xact_id()
    WHERE name = 'plans' AND last_xact IS DISTINCT FROM pg_current_xact_id();
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER plans_changed AFTER INSERT OR UPDATE OR DELETE ON plans
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION plans_changed();
CREATE CONSTRAINT TRIGGER decisions_changed AFTER INSERT ON decisions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION plans_changed();

CREATE TABLE tool_approvals (
  id            text COLLATE "C" PRIMARY KEY,
  run_id        text COLLATE "C" NOT NULL REFERENCES runs (id),
  session_id    text COLLATE "C" NOT NULL,
  plan_id       text COLLATE "C",
  tool_use_id   text NOT NULL,
  tool          text NOT NULL,
  input         json NOT NULL,              -- what the model asked to run
  input_sha256  text,                       -- the sha256 of the input a person allowed
  status        text NOT NULL CHECK (status IN ('pending', 'allowed', 'denied', 'timed_out', 'canceled')),
  message       text,                       -- the decider's words, read by the model
  decided_by    text,
  prior_results json NOT NULL DEFAULT '[]',
  created_at    bigint NOT NULL,
  expires_at    bigint NOT NULL,
  decided_at    bigint,
  UNIQUE (run_id, tool_use_id)
);
CREATE INDEX tool_approvals_pending ON tool_approvals (expires_at) WHERE status = 'pending';
CREATE INDEX tool_approvals_by_created ON tool_approvals (created_at, id);

-- One row per Write, Edit or Bash call of an execute run, written before the call starts and completed with
-- its result when it ends. A row still open when a run is retried was cut off by a crash: the call is not run
-- again. While a command runs, its process group and the group leader's start time are recorded, so a daemon
-- that starts after a crash can kill what is left of it.
CREATE TABLE tool_calls (
  run_id        text COLLATE "C" NOT NULL REFERENCES runs (id),
  tool_use_id   text NOT NULL,
  tool          text NOT NULL,
  input_sha256  text NOT NULL,
  started_at    bigint NOT NULL,
  process_group integer,
  process_start text,                       -- '<boot id>:<start time in clock ticks>' of the group leader
  finished_at   bigint,
  result        json,                       -- {content, is_error} once finished
  PRIMARY KEY (run_id, tool_use_id)
);
CREATE INDEX tool_calls_open ON tool_calls (started_at) WHERE finished_at IS NULL;

CREATE TABLE triggers (
  id          text COLLATE "C" PRIMARY KEY,
  name        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('github', 'generic', 'schedule')),
  events      json NOT NULL DEFAULT '[]',   -- ["pull_request.opened", ...] (github)
  filters     json NOT NULL DEFAULT '{}',   -- repositories, base_branches, labels, authors, draft
  prompt      text NOT NULL,                -- template; external text never goes into it
  workspace   text,                         -- generic, schedule: the directory runs work in
  options     json NOT NULL DEFAULT '{}',   -- run options (model, approvals_required, execute_mode, ...)
  hourly_cap  integer NOT NULL,
  token_id    text COLLATE "C" UNIQUE,      -- generic: public part of its bearer token
  token_hash  bytea,                        -- generic: sha256 of the secret part
  enabled     boolean NOT NULL DEFAULT true,
  created_by  text NOT NULL,
  created_at  bigint NOT NULL,
  updated_at  bigint NOT NULL
);
CREATE INDEX triggers_by_created ON triggers (created_at, id);

-- Every webhook delivery and fire received, with what became of it. The unique key deduplicates redeliveries
-- (X-GitHub-Delivery) and repeated fires (the trigger's idempotency key). A verified delivery waits as
-- `queued` with its raw body until the trigger worker routes it; a worker claims a queued delivery for a while
-- before processing it, so that daemons sharing the database never both do.
CREATE TABLE deliveries (
  seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- the order of arrival (SQLite's rowid)
  id            text COLLATE "C" PRIMARY KEY,
  source        text NOT NULL CHECK (source IN ('github', 'fire')),
  key           text NOT NULL,
  event         text NOT NULL,
  trigger_id    text COLLATE "C",
  outcome       text NOT NULL CHECK (outcome IN
                  ('queued', 'accepted', 'duplicate', 'filtered', 'capped', 'rejected', 'ignored', 'failed')),
  detail        text,
  subject       text,                       -- e.g. owner/repo#12
  run_ids       json NOT NULL DEFAULT '[]',
  received_at   bigint NOT NULL,
  payload       text,                       -- the verified raw body, until processed
  claimed_until bigint,                     -- a daemon's inbox is processing it until then (ms)
  processed_at  bigint,
  UNIQUE (source, key)
);
-- The inbox, in arrival order.
CREATE INDEX deliveries_queued ON deliveries (seq) WHERE outcome = 'queued';
CREATE INDEX deliveries_by_trigger ON deliveries (trigger_id, seq) WHERE trigger_id IS NOT NULL;
CREATE INDEX deliveries_by_outcome ON deliveries (outcome, seq);

-- Which trigger fired for which delivery (one fire per pair, whatever races happen above).
CREATE TABLE trigger_fires (
  trigger_id  text COLLATE "C" NOT NULL,
  delivery_id text COLLATE "C" NOT NULL,
  outcome     text NOT NULL CHECK (outcome IN ('accepted', 'filtered', 'capped')),
  run_id      text COLLATE "C",
  at          bigint NOT NULL,
  PRIMARY KEY (trigger_id, delivery_id)
);
CREATE INDEX trigger_fires_recent ON trigger_fires (trigger_id, at, delivery_id);
CREATE INDEX trigger_fires_by_delivery ON trigger_fires (delivery_id);

-- Accepted fires per trigger and minute (minute = ms since the epoch / 60000): the hourly cap sums at most 61
-- of these rows instead of counting up to `hourly_cap` fires.
CREATE TABLE trigger_fire_counts (
  trigger_id  text COLLATE "C" NOT NULL,
  minute      bigint NOT NULL,
  fires       integer NOT NULL,
  PRIMARY KEY (trigger_id, minute)
);

-- Outbound notifications (src/notify/). The run event log is the source: a notifier reads it in log order
-- from a cursor (scheduler_state 'notifications.cursor') and writes one outbox row per (event, webhook) in the
-- transaction that moves the cursor; a sender posts due rows until they are delivered or out of attempts.
CREATE TABLE notifications (
  id              text COLLATE "C" PRIMARY KEY, -- the idempotency id, X-Drydock-Delivery, stable across retries
  event_rowid     bigint NOT NULL,          -- the run_events row it announces (run_events.id)
  webhook         text NOT NULL,            -- the receiver's key (a hash of its URL, never the URL)
  webhook_url     text NOT NULL,            -- the receiver's URL as shown: no userinfo, query or deeper path
  event           text NOT NULL,            -- plan.pending, question.pending, ...
  run_id          text COLLATE "C" NOT NULL,
  plan_id         text COLLATE "C",
  data            json NOT NULL,            -- the ids, title and links announced
  body            text NOT NULL,            -- the exact bytes sent on every attempt
  status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0, -- attempts started (one cut off by a crash counts)
  last_error      text,                     -- HTTP status or network error of the last failed attempt
  next_attempt_at bigint,                   -- pending: due then; while an attempt runs, its lease (ms)
  created_at      bigint NOT NULL,
  delivered_at    bigint,
  UNIQUE (event_rowid, webhook)
);
CREATE INDEX notifications_due ON notifications (next_attempt_at, created_at) WHERE status = 'pending';
CREATE INDEX notifications_recent ON notifications (created_at, id);
