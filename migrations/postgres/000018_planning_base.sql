-- drydock schema (PostgreSQL), version 18: plans are made from what executes. planning_base is what a
-- plan-phase run in a git workspace reads: a clean checkout of the workspace's HEAD commit, fixed when the run
-- first opens, and what the workspace had uncommitted then (JSON: {"commit": "...", "uncommitted": {"count": n,
-- "paths": [...]}}; NULL: a plain directory, a repository without a commit, a pull request's or commit event's
-- run, or a run from before this version). plans.uncommitted is that run's uncommitted changes, kept with the
-- plan it proposed (JSON: {"count": n, "paths": [...]}, at most 20 paths, relative to the session's workspace;
-- NULL: none).
ALTER TABLE runs ADD COLUMN planning_base json;
ALTER TABLE plans ADD COLUMN uncommitted json;
