-- drydock schema, version 22: where a delivery took the execution's commit (src/delivery/pr-target.ts). A
-- pull request's run no longer opens a pull request into the base carrying the contributor's commits: its
-- commit goes onto the pull request's own branch (head), into a pull request onto that branch (stacked), or,
-- replayed alone onto the base, into a pull request there (base); a fork's change that does not apply to the
-- base alone is posted as a patch (patch). Recorded when the step that decides it is done, so that a retry
-- goes on the same way. NULL: not decided yet, and every delivery before this version (those went to base).
ALTER TABLE plans ADD COLUMN delivery_target TEXT
  CHECK (delivery_target IN ('base', 'head', 'stacked', 'patch'));
