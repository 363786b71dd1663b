-- drydock schema, version 15: a plan's network is the list of host names its commands may reach through the
-- egress proxy (src/agent/egress.ts), no longer "the host's network". network_domains holds that list as a JSON
-- array of strings, normalized (lower case, sorted); network stays 1 exactly when the list is not empty.
-- NULL: a plan made before this version. One with network = 1 is read as the configured default list
-- (execute.network_default_domains) at read time (src/store/rows.ts, toPlan), never as the host's network.
ALTER TABLE plans ADD COLUMN network_domains TEXT;
