-- The plans version (PlanStore.plansVersion) without one row every plan-writing transaction waits for, and
-- heard rather than asked for.
--
-- 1. Shards. The counter of 000001_schema.sql is one row that each transaction writing a plan or a decision
--    updates at its commit: the row stays locked until that commit has reached the disk, so every such
--    transaction of every process waited for the one before it, one WAL flush after another (under load, a
--    queue). The counter becomes 16 rows, 'plans' and 'plans:1' .. 'plans:15': a transaction moves the one
--    its transaction id picks (always the same one within a transaction, so "once per transaction" still
--    holds), and the version is their sum (src/store/postgres/plans.ts). Each commit still moves the sum, and
--    a reader still sees the new sum together with the write; transactions on different rows commit side by
--    side (their flushes can be one).
-- 2. Wake-ups. The transaction that moves the counter also notifies drydock_plans, so that a process
--    listening there keeps the version it read until it hears of a change (src/store/postgres/versions.ts)
--    instead of reading it for every listing. As with 000003_wakeups.sql, the notification is delivered at
--    commit (never for a rollback), once per transaction (same channel, same payload), and is a hint: the
--    counter stays the truth.
INSERT INTO change_counters (name, value) SELECT 'plans:' || n, 0 FROM generate_series(1, 15) AS n;

CREATE OR REPLACE FUNCTION plans_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  shard int := (pg_current_xact_id()::text::bigint % 16)::int;
BEGIN
  UPDATE change_counters SET value = value + 1, last_xact = pg_current_xact_id()
    WHERE name = CASE WHEN shard = 0 THEN 'plans' ELSE 'plans:' || shard END
      AND last_xact IS DISTINCT FROM pg_current_xact_id();
  -- Once per transaction: only the row trigger that moved the counter notifies.
  IF FOUND THEN
    PERFORM pg_notify('drydock_plans', '');
  END IF;
  RETURN NULL;
END;
$$;
