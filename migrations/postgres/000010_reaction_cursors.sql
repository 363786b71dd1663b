-- One durable cursor per reaction (src/reactions/). Every reaction to what happened (GitHub reports, plan
-- settling, plan delivery, notifications) reads the run event log after its own cursor, the id of the last
-- event it is done with, and holds its row for a pass (holder, held_until) so that of several replicas only
-- one runs a reaction at a time.
CREATE TABLE reaction_cursors (
  name       text COLLATE "C" PRIMARY KEY,
  cursor     bigint NOT NULL,
  holder     text COLLATE "C",
  held_until bigint,
  updated_at bigint NOT NULL
);

-- The notifier's cursor becomes its reaction's: nothing already announced is announced again, nothing is lost.
INSERT INTO reaction_cursors (name, cursor, updated_at)
  SELECT 'notifications', value::bigint, 0 FROM scheduler_state WHERE key = 'notifications.cursor';
