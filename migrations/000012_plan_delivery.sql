-- drydock schema, version 12: delivering an executed plan's result. After a successful execution its branch
-- drydock/<plan id> is pushed to the workspace's remote and, for GitHub repositories, a pull request is opened
-- (src/delivery/). Each step is recorded as it completes, so a retry (after a failure or a crash) goes on
-- from the first step not yet done. The worker finds its work here, not in memory: a daemon that died between
-- the execution and its delivery delivers after the next start.
--
-- delivery_status: NULL until the delivery worker has looked at an executed plan (every plan before that);
-- then off (not asked for, or nothing to push), pending (due at delivery_next_at), retrying (an attempt
-- failed; the next is due at delivery_next_at), delivered or failed (attempts used up).
ALTER TABLE plans ADD COLUMN delivery_status TEXT
  CHECK (delivery_status IN ('off', 'pending', 'retrying', 'delivered', 'failed'));
ALTER TABLE plans ADD COLUMN delivery_branch TEXT;
ALTER TABLE plans ADD COLUMN delivery_remote TEXT;            -- the remote's name and URL, never credentials
ALTER TABLE plans ADD COLUMN delivery_commit TEXT;            -- the commit pushed
ALTER TABLE plans ADD COLUMN delivery_pushed_at INTEGER;
ALTER TABLE plans ADD COLUMN delivery_pr_url TEXT;
ALTER TABLE plans ADD COLUMN delivery_pr_number INTEGER;
ALTER TABLE plans ADD COLUMN delivery_comment_url TEXT;       -- the comment on the pull request a run came from
ALTER TABLE plans ADD COLUMN delivery_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE plans ADD COLUMN delivery_last_error TEXT;        -- scrubbed of tokens and URL credentials
ALTER TABLE plans ADD COLUMN delivery_next_at INTEGER;
-- A worker attempting the delivery holds it until then (another process on the same file leaves it alone); a
-- worker that died lets it lapse.
ALTER TABLE plans ADD COLUMN delivery_claimed_until INTEGER;
ALTER TABLE plans ADD COLUMN delivery_settled_at INTEGER;     -- when it became delivered or failed

-- Plans executed before this version were never asked to deliver.
UPDATE plans SET delivery_status = 'off' WHERE status = 'executed';

-- The worker's two questions: which executed plans it has not looked at yet, and which deliveries are due.
CREATE INDEX plans_delivery_undecided ON plans (created_at) WHERE status = 'executed' AND delivery_status IS NULL;
CREATE INDEX plans_delivery_due ON plans (delivery_next_at) WHERE delivery_status IN ('pending', 'retrying');
