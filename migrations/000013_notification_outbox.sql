-- drydock schema, version 13: outbound notifications (src/notify/). The run event log is the source: a
-- notifier reads it in rowid order from a cursor (scheduler_state 'notifications.cursor') and writes one
-- outbox row per (event, webhook) in the transaction that moves the cursor; a sender posts due rows until
-- they are delivered or out of attempts. Rows outlive restarts and crashes: delivery is at least once.

CREATE TABLE notifications (
  id              TEXT PRIMARY KEY,             -- the idempotency id, X-Drydock-Delivery, stable across retries
  event_rowid     INTEGER NOT NULL,             -- the run_events row it announces
  webhook         TEXT NOT NULL,                -- the receiver's key (a hash of its URL, never the URL)
  webhook_url     TEXT NOT NULL,                -- the receiver's URL as shown: no userinfo, query or deeper path
  event           TEXT NOT NULL,                -- plan.pending, question.pending, ...
  run_id          TEXT NOT NULL,
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
CREATE INDEX notifications_due ON notifications (status, next_attempt_at);
CREATE INDEX notifications_recent ON notifications (created_at, id);
