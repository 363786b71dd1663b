-- A plan's network is the list of host names its commands may reach through the egress proxy
-- (src/agent/egress.ts), no longer "the host's network": network_domains holds it as a JSON array of strings,
-- normalized (lower case, sorted); network stays true exactly when the list is not empty. NULL: a plan made
-- before this migration; one with network true is read as the configured default list
-- (execute.network_default_domains) at read time (src/store/rows.ts, toPlan), never as the host's network.
ALTER TABLE plans ADD COLUMN network_domains json;
