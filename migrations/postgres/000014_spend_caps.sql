-- Spend caps (src/domain/spend.ts, README "Spend caps"). A trigger and a session carry their own caps as
-- JSON ({"daily_usd": 5, "daily_runs": 20}; '{}': none); the global one is config (limits). The day's spend
-- is counted from the runs created in it (runs_by_created covers the range). A run over its day's daily_usd
-- waits on `spend_cap` until the day resets: waiting_on's CHECK widens.
ALTER TABLE triggers ADD COLUMN limits json NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN limits json NOT NULL DEFAULT '{}';

ALTER TABLE runs DROP CONSTRAINT runs_waiting_on_check;
ALTER TABLE runs ADD CONSTRAINT runs_waiting_on_check CHECK (waiting_on IN ('spend_limit', 'spend_cap'));

-- Which scope reached which cap on which day (of the limits zone): the first replica to insert the row
-- announces it (limit.reached, a log line); every later capped slot or fire of that day finds it there.
CREATE TABLE spend_cap_notices (
  scope      text NOT NULL CHECK (scope IN ('trigger', 'session', 'global')),
  scope_id   text COLLATE "C" NOT NULL,  -- '' for the global cap
  day        text NOT NULL,              -- YYYY-MM-DD in the limits zone
  cap        text NOT NULL CHECK (cap IN ('daily_usd', 'daily_runs')),
  at         bigint NOT NULL,
  PRIMARY KEY (scope, scope_id, day)
);

-- A notification may announce something that is not in a run's event log: limit.reached (a spend cap met,
-- announced once per scope and day, in the transaction that writes its spend_cap_notices row). Its
-- event_rowid and run_id are NULL (NULLs never collide in the UNIQUE).
ALTER TABLE notifications ALTER COLUMN event_rowid DROP NOT NULL;
ALTER TABLE notifications ALTER COLUMN run_id DROP NOT NULL;
