-- drydock schema, version 24: spend caps (src/domain/spend.ts, README "Spend caps"). A trigger and a session
-- carry their own caps as JSON ({"daily_usd": 5, "daily_runs": 20}; '{}': none); the global one is config
-- (limits). The day's spend is counted from the runs created in it (runs_by_created covers the range).
-- A run over its day's daily_usd waits on `spend_cap` until the day resets: waiting_on's CHECK widens. SQLite
-- cannot alter a CHECK, and the column is in no index or other constraint, so it is added anew, copied,
-- dropped and renamed (no table rebuild; the column moves to the end of the row, which nothing reads by
-- position).
ALTER TABLE triggers ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';

ALTER TABLE runs ADD COLUMN waiting_on_v24 TEXT CHECK (waiting_on_v24 IN ('spend_limit', 'spend_cap'));
UPDATE runs SET waiting_on_v24 = waiting_on WHERE waiting_on IS NOT NULL;
ALTER TABLE runs DROP COLUMN waiting_on;
ALTER TABLE runs RENAME COLUMN waiting_on_v24 TO waiting_on;

-- Which scope reached which cap on which day (of the limits zone): the first replica to insert the row
-- announces it (limit.reached, a log line); every later capped slot or fire of that day finds it there.
CREATE TABLE spend_cap_notices (
  scope      TEXT NOT NULL CHECK (scope IN ('trigger', 'session', 'global')),
  scope_id   TEXT NOT NULL,            -- '' for the global cap
  day        TEXT NOT NULL,            -- YYYY-MM-DD in the limits zone
  cap        TEXT NOT NULL CHECK (cap IN ('daily_usd', 'daily_runs')),
  at         INTEGER NOT NULL,
  PRIMARY KEY (scope, scope_id, day)
);

-- A notification may announce something that is not in a run's event log: limit.reached (a spend cap met,
-- announced once per scope and day, in the transaction that writes its spend_cap_notices row). Its
-- event_rowid and run_id are NULL (NULLs never collide in the UNIQUE). SQLite cannot drop a NOT NULL: the
-- table is rebuilt (no other table refers to it).
CREATE TABLE notifications_v24 (
  id              TEXT PRIMARY KEY,             -- the idempotency id, X-Drydock-Delivery, stable across retries
  event_rowid     INTEGER,                      -- the run_events row it announces; NULL: not a run's event
  webhook         TEXT NOT NULL,                -- the receiver's key (a hash of its URL, never the URL)
  webhook_url     TEXT NOT NULL,                -- the receiver's URL as shown: no userinfo, query or deeper path
  event           TEXT NOT NULL,                -- plan.pending, question.pending, ..., limit.reached
  run_id          TEXT,                         -- NULL: not about a run (limit.reached)
  plan_id         TEXT,
  data            TEXT NOT NULL,                -- JSON: the ids, title and links announced
  body            TEXT NOT NULL,                -- the exact bytes sent on every attempt
  status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,   -- attempts started (one cut off by a crash counts)
  last_error      TEXT,                         -- HTTP status or network error of the last failed attempt
  next_attempt_at INTEGER,                      -- pending: due then; while an attempt runs, its lease (ms)
  created_at      INTEGER NOT NULL,
  delivered_at    INTEGER,
  UNIQUE (event_rowid, webhook)
);
INSERT INTO notifications_v24 (id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body, status,
                               attempts, last_error, next_attempt_at, created_at, delivered_at)
  SELECT id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body, status, attempts, last_error,
         next_attempt_at, created_at, delivered_at
  FROM notifications ORDER BY rowid;
DROP TABLE notifications;
ALTER TABLE notifications_v24 RENAME TO notifications;
CREATE INDEX notifications_due ON notifications (status, next_attempt_at);
CREATE INDEX notifications_recent ON notifications (created_at, id);
