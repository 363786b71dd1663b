-- A session's workspace kind, fixed when the session is made: 'git' (executions run in a worktree of the
-- repository) or 'plain' (on a copy drydock makes; a `.git` that appears there later is never read). NULL: a
-- session made before this migration, judged as before (a git repository or not, now).
ALTER TABLE sessions ADD COLUMN workspace_kind text CHECK (workspace_kind IN ('git', 'plain'));
