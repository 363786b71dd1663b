-- drydock schema, version 16: a session's workspace kind, fixed when the session is made (issue: the host
-- never interprets what a sandboxed command wrote). 'git': executions run in a worktree of the repository;
-- 'plain': on a copy drydock makes, and no `.git` that appears in the directory later is ever read. NULL:
-- a session made before this version, whose kind is judged as before (a git repository or not, now).
ALTER TABLE sessions ADD COLUMN workspace_kind TEXT CHECK (workspace_kind IN ('git', 'plain'));
