-- drydock schema, version 20: one durable cursor per reaction (src/reactions/). Every reaction to what
-- happened (GitHub reports, plan settling, plan delivery, notifications) reads the run event log after its
-- own cursor, the rowid of the last event it is done with, and holds its row for a pass (holder, held_until)
-- so that of several daemons on one database only one runs a reaction at a time.
CREATE TABLE reaction_cursors (
  name       TEXT PRIMARY KEY,    -- the reaction: github_report, plan_settling, plan_delivery, notifications
  cursor     INTEGER NOT NULL,    -- the rowid of the last event reacted to (or passed)
  holder     TEXT,                -- the replica running the reaction now, null when none
  held_until INTEGER,             -- when that hold lapses (ms); another replica may take it over then
  updated_at INTEGER NOT NULL
);

-- The notifier's cursor becomes its reaction's: nothing already announced is announced again, nothing is lost.
INSERT INTO reaction_cursors (name, cursor, updated_at)
  SELECT 'notifications', CAST(value AS INTEGER), 0 FROM scheduler_state WHERE key = 'notifications.cursor';
