-- Where a delivery took the execution's commit (src/delivery/pr-target.ts): base (a pull request into the
-- base; for a pull request's run, only drydock's commit replayed onto it), head (onto the pull request's own
-- branch), stacked (a pull request into that branch) or patch (a comment with the change). NULL until the step
-- that decides it is done, and for every delivery before this version.
ALTER TABLE plans ADD COLUMN delivery_target text
  CHECK (delivery_target IN ('base', 'head', 'stacked', 'patch'));
