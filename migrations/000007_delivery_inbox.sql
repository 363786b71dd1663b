-- drydock schema, version 7: webhook deliveries are answered once recorded and processed from an inbox;
-- the hourly cap of a trigger is counted in minute buckets.

-- A verified delivery waits as `queued` with its raw body until the trigger worker routes it; `failed` keeps
-- the body of one whose processing raised, so that GitHub's redelivery processes it again. A worker claims
-- a queued delivery for a while before processing it, so that daemons sharing the file never both do.
CREATE TABLE deliveries_v7 (
  id            TEXT PRIMARY KEY,
  source        TEXT NOT NULL CHECK (source IN ('github', 'fire')),
  key           TEXT NOT NULL,
  event         TEXT NOT NULL,
  trigger_id    TEXT,
  outcome       TEXT NOT NULL CHECK (outcome IN
                  ('queued', 'accepted', 'duplicate', 'filtered', 'capped', 'rejected', 'ignored', 'failed')),
  detail        TEXT,
  subject       TEXT,                           -- e.g. owner/repo#12
  run_ids       TEXT NOT NULL DEFAULT '[]',
  received_at   INTEGER NOT NULL,
  payload       TEXT,                           -- the verified raw body, until processed
  claimed_until INTEGER,                        -- a daemon's inbox is processing it until then (ms)
  processed_at  INTEGER,
  UNIQUE (source, key)
);
INSERT INTO deliveries_v7 (id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at,
                           payload, processed_at)
  SELECT id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at, NULL,
         CASE WHEN outcome = 'accepted' AND detail IS NULL AND run_ids = '[]' THEN NULL ELSE received_at END
  FROM deliveries ORDER BY received_at, id;
DROP TABLE deliveries;
ALTER TABLE deliveries_v7 RENAME TO deliveries;
-- Listings go newest first by rowid (the order of arrival), so received_at needs no index of its own: one
-- index less to keep up on every webhook.
-- The inbox, in arrival order (an index entry ends with the rowid).
CREATE INDEX deliveries_queued ON deliveries (outcome) WHERE outcome = 'queued';

-- Accepted fires per trigger and minute (minute = ms since the epoch / 60000): the hourly cap sums at most
-- 61 of these rows instead of counting up to `hourly_cap` fires.
CREATE TABLE trigger_fire_counts (
  trigger_id  TEXT NOT NULL,
  minute      INTEGER NOT NULL,
  fires       INTEGER NOT NULL,
  PRIMARY KEY (trigger_id, minute)
) WITHOUT ROWID;
INSERT INTO trigger_fire_counts (trigger_id, minute, fires)
  SELECT trigger_id, at / 60000, COUNT(*) FROM trigger_fires
  WHERE outcome = 'accepted' AND at > (CAST(strftime('%s', 'now') AS INTEGER) - 7200) * 1000
  GROUP BY trigger_id, at / 60000;
