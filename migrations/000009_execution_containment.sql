-- drydock schema, version 9: what the execute phase runs is journaled, so that a call runs at most once;
-- a tool approval is bound to the exact input it allowed; a plan records whether its commands may use the
-- network.

-- One row per Write, Edit or Bash call of an execute run, written before the call starts and completed with
-- its result when it ends. A row still open when a run is retried was cut off by a crash: the call is not
-- run again. While a command runs, its process group and the group leader's start time are recorded, so a
-- daemon that starts after a crash can kill what is left of it (and never a process that merely reuses the
-- number).
CREATE TABLE tool_calls (
  run_id        TEXT NOT NULL REFERENCES runs (id),
  tool_use_id   TEXT NOT NULL,
  tool          TEXT NOT NULL,
  input_sha256  TEXT NOT NULL,
  started_at    INTEGER NOT NULL,
  process_group INTEGER,
  process_start TEXT,                      -- '<boot id>:<start time in clock ticks>' of the group leader
  finished_at   INTEGER,
  result        TEXT,                      -- JSON {content, is_error} once finished
  PRIMARY KEY (run_id, tool_use_id)
);
CREATE INDEX tool_calls_open ON tool_calls (started_at) WHERE finished_at IS NULL;

-- The sha256 of the input a person allowed; NULL only on rows written before this version, which no longer
-- match any call.
ALTER TABLE tool_approvals ADD COLUMN input_sha256 TEXT;

ALTER TABLE plans ADD COLUMN network INTEGER NOT NULL DEFAULT 0;
