-- PLACEHOLDER for the delivery part's migration 000012 (issue 13), so that this branch's 000013 loads on its
-- own (migrations must be contiguous). Drop this file when merging with the branch that adds 000012.
SELECT 1;
