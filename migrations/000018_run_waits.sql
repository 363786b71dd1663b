-- drydock schema, version 18: a run awaiting input may wait on the account instead of a person
-- (src/domain/types.ts, RunWait): waiting_on names what (spend_limit: the account reached its spend limit) and
-- waiting_until when it is claimed again on its own (ms). An admin's resume clears both; so does the claim.
ALTER TABLE runs ADD COLUMN waiting_on TEXT CHECK (waiting_on IN ('spend_limit'));
ALTER TABLE runs ADD COLUMN waiting_until INTEGER;
