-- Who holds a plan delivery's claim: a replica's restart takes back the claims it holds, by name, rather
-- than wait for them to lapse (delivery.push_timeout_ms plus five minutes).
ALTER TABLE plans ADD COLUMN delivery_claimed_by text COLLATE "C";
