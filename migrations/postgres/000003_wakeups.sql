-- Wake-ups for replicas sharing the database (WakeStore.onWake, src/store/postgres/listen.ts): a change another
-- process should look at sends a NOTIFY on one of four channels. They are hints, never the data: a listener
-- reads the tables again, and polling stays the fallback.
--
--   drydock_runs    (payload '')      a run was inserted or changed status; a question or tool approval was
--                                     answered, decided, timed out or canceled
--   drydock_events  (payload run id)  an event was appended to that run's log
--   drydock_inbox   (payload '')      a webhook delivery waits for processing (deliveries.outcome = 'queued')
--   drydock_outbox  (payload '')      a notification was queued, or an executed plan's delivery waits for the
--                                     delivery worker (plans hold their delivery: there is no table of its own)
--
-- PostgreSQL facts relied on (docs: sql-notify, sql-createtrigger, plpgsql-trigger):
-- - pg_notify(channel, payload) inside a transaction is delivered only when the transaction commits, and not at
--   all when it rolls back; listeners never see a change before it is visible.
-- - Within one transaction, notifications of the same channel with the same payload are folded into one: 20
--   events appended to one run in one transaction make one drydock_events notification (its payload being the
--   run id only), and the constant-payload channels notify at most once per transaction.
-- - The payload must be shorter than 8000 bytes; a run id is far shorter.
-- - A FOR EACH STATEMENT trigger fires once per statement, even one that changed no row (an INSERT ... ON
--   CONFLICT DO NOTHING that inserted nothing): the statement-level triggers below reference the statement's
--   inserted rows (REFERENCING NEW TABLE) and notify only when there are some. A transition table cannot be
--   used by an UPDATE trigger with a column list (UPDATE OF ...), so the status changes are row-level triggers
--   whose WHEN condition (evaluated without calling the function) keeps rows whose status did not change, and
--   periodic sweeps that match no row, from notifying at all.

CREATE FUNCTION drydock_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- TG_ARGV[0]: the channel.
  PERFORM pg_notify(TG_ARGV[0], '');
  RETURN NULL;
END;
$$;

-- A statement-level trigger's: notify when the statement inserted at least one row.
CREATE FUNCTION drydock_wake_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT FROM inserted) THEN
    PERFORM pg_notify(TG_ARGV[0], '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION drydock_wake_inbox_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT FROM inserted WHERE outcome = 'queued') THEN
    PERFORM pg_notify('drydock_inbox', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION drydock_wake_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('drydock_events', NEW.run_id);
  RETURN NULL;
END;
$$;

-- runs: queued (inserted), parked, released, ended.
CREATE TRIGGER runs_wake_inserted AFTER INSERT ON runs
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION drydock_wake_inserted('drydock_runs');
CREATE TRIGGER runs_wake_status AFTER UPDATE OF status ON runs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION drydock_wake('drydock_runs');

-- A question answered or closed, a tool approval decided or closed: the parked run may go on.
CREATE TRIGGER questions_wake_status AFTER UPDATE OF status ON questions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION drydock_wake('drydock_runs');
CREATE TRIGGER tool_approvals_wake_status AFTER UPDATE OF status ON tool_approvals
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION drydock_wake('drydock_runs');

-- The event log: one notification per run and transaction.
CREATE TRIGGER run_events_wake AFTER INSERT ON run_events
  FOR EACH ROW EXECUTE FUNCTION drydock_wake_event();

-- The webhook inbox: a delivery recorded as queued, or queued again (requeueDelivery).
CREATE TRIGGER deliveries_wake_inserted AFTER INSERT ON deliveries
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION drydock_wake_inbox_inserted();
CREATE TRIGGER deliveries_wake_requeued AFTER UPDATE OF outcome ON deliveries
  FOR EACH ROW WHEN (NEW.outcome = 'queued' AND OLD.outcome IS DISTINCT FROM 'queued')
  EXECUTE FUNCTION drydock_wake('drydock_inbox');

-- The outbox: notifications queued; an executed plan the delivery worker has not looked at yet (delivery
-- NULL), or a plan delivery that became pending or retrying.
CREATE TRIGGER notifications_wake_inserted AFTER INSERT ON notifications
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION drydock_wake_inserted('drydock_outbox');
CREATE TRIGGER plans_wake_delivery AFTER UPDATE OF status, delivery_status ON plans
  FOR EACH ROW WHEN (
    (NEW.status = 'executed' AND NEW.delivery_status IS NULL AND OLD.status IS DISTINCT FROM 'executed')
    OR (NEW.delivery_status IN ('pending', 'retrying') AND OLD.delivery_status IS DISTINCT FROM NEW.delivery_status))
  EXECUTE FUNCTION drydock_wake('drydock_outbox');
