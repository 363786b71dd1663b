-- drydock schema, version 17: fencing a replica that lost its claim (src/store/store.ts, Fence). Every claim of
-- a run takes the next claim_epoch; a write on behalf of a claimed run applies only while the run is running
-- with that claimed_by and claim_epoch. A process paused past its lease, or replaced by a restart of the same
-- replica, holds an epoch no longer current and writes nothing more.
ALTER TABLE runs ADD COLUMN claim_epoch INTEGER NOT NULL DEFAULT 0;

-- One pending plan per run, as the store's last word. A run that stored a second pending plan before this
-- version (a paused replica went on after its run was taken over) keeps the one the run names (runs.plan_id),
-- or, naming none of them, its oldest; the others are superseded.
UPDATE plans SET status = 'superseded', decided_at = COALESCE(decided_at, created_at)
 WHERE status = 'pending_approval'
   AND EXISTS (SELECT 1 FROM plans o WHERE o.run_id = plans.run_id AND o.status = 'pending_approval'
                 AND o.id <> plans.id)
   AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = plans.run_id AND r.plan_id = plans.id)
   AND (EXISTS (SELECT 1 FROM runs r JOIN plans n ON n.id = r.plan_id
                 WHERE r.id = plans.run_id AND n.status = 'pending_approval')
        OR EXISTS (SELECT 1 FROM plans o WHERE o.run_id = plans.run_id AND o.status = 'pending_approval'
                     AND (o.created_at < plans.created_at OR (o.created_at = plans.created_at AND o.id < plans.id))));
CREATE UNIQUE INDEX plans_one_pending_per_run ON plans (run_id) WHERE status = 'pending_approval';
