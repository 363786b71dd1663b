-- drydock schema (PostgreSQL), version 15: smart staleness. footprint holds what a plan's plan phase read,
-- searched and named (JSON: {"files": [...], "dirs": [...], "globs": [{"dir", "pattern"}]}, workspace-relative
-- paths; see src/domain/footprint.ts); NULL on a plan made before this version or whose reads could not be
-- bounded, which is stale as soon as its workspace moves. execution_base is the head an approval found moved
-- on without touching the footprint: the execution starts from it (NULL: from workspace_commit).
ALTER TABLE plans ADD COLUMN footprint json;
ALTER TABLE plans ADD COLUMN execution_base text;
