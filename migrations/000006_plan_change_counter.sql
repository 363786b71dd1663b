-- drydock schema, version 6: a counter that moves whenever the plan queue changes (a plan or a decision is
-- written, by this process or another on the same file), so the queue's first page can be served from a
-- cache that is never stale.
CREATE TABLE change_counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
INSERT INTO change_counters (name, value) VALUES ('plans', 0);

CREATE TRIGGER plans_changed_insert AFTER INSERT ON plans
BEGIN UPDATE change_counters SET value = value + 1 WHERE name = 'plans'; END;
CREATE TRIGGER plans_changed_update AFTER UPDATE ON plans
BEGIN UPDATE change_counters SET value = value + 1 WHERE name = 'plans'; END;
CREATE TRIGGER plans_changed_delete AFTER DELETE ON plans
BEGIN UPDATE change_counters SET value = value + 1 WHERE name = 'plans'; END;
CREATE TRIGGER decisions_changed_insert AFTER INSERT ON decisions
BEGIN UPDATE change_counters SET value = value + 1 WHERE name = 'plans'; END;
