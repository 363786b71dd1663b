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
