-- The plans version heard, not asked for: the transaction that moves the plans change counter (a plan or a
-- decision written, 000001_schema.sql) also notifies drydock_plans, so that a process listening there keeps
-- the version it read until it hears of a change (src/store/postgres/versions.ts) instead of reading it for
-- every listing. As with the wake-ups of 000003_wakeups.sql, the notification is delivered at commit (never
-- for a rollback), once per transaction (same channel, same payload), and is a hint: the counter stays the
-- truth.
CREATE OR REPLACE FUNCTION plans_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE change_counters SET value = value + 1, last_xact = pg_current_xact_id()
    WHERE name = 'plans' AND last_xact IS DISTINCT FROM pg_current_xact_id();
  -- Once per transaction: only the row trigger that moved the counter notifies.
  IF FOUND THEN
    PERFORM pg_notify('drydock_plans', '');
  END IF;
  RETURN NULL;
END;
$$;
