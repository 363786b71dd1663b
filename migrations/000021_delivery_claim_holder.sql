-- drydock schema, version 21: who holds a plan delivery's claim. A daemon killed mid-delivery left its claim
-- to lapse on its own (delivery.push_timeout_ms plus five minutes); its restart now takes back the claims its
-- replica holds, by name, and goes on at once.
ALTER TABLE plans ADD COLUMN delivery_claimed_by TEXT;
