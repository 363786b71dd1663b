-- drydock schema, version 14: run claims, for several replicas on one database (src/runs/queue.ts). A running
-- run is executed by the replica named in claimed_by, which holds it until lease_until (ms) unless it renews
-- the lease; a replica that died lets it lapse, and another takes the run over. Every move out of running
-- clears both (src/store/store.ts, RunStore); a parked run belongs to no replica.
ALTER TABLE runs ADD COLUMN claimed_by TEXT;
ALTER TABLE runs ADD COLUMN lease_until INTEGER;

-- Recovery's question: which running runs are unclaimed or have a lapsed lease. Only running runs are in it.
CREATE INDEX runs_running_by_lease ON runs (lease_until) WHERE status = 'running';
