-- drydock schema, version 5: find pending plans by expiry without visiting every pending plan.
CREATE INDEX plans_pending_expiry ON plans (status, expires_at) WHERE status = 'pending_approval';
