-- drydock schema, version 8: sessions of the approver page (/ui) are kept server-side, so that signing out
-- or revoking the token behind one ends it at once instead of when its cookie would have expired.

-- The cookie carries a random id (256 bits); only its sha256 is stored, so reading the database does not
-- yield a cookie that works. A row outlives its revocation until it expires, then it may be pruned.
CREATE TABLE ui_sessions (
  id_hash     BLOB PRIMARY KEY,              -- sha256 of the id the cookie carries
  token_id    TEXT NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,  -- the token signed in with
  identity    TEXT NOT NULL,                 -- that token's identity at sign-in
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  revoked_at  INTEGER
) WITHOUT ROWID;
-- Revoking a token revokes its sessions.
CREATE INDEX ui_sessions_by_token ON ui_sessions (token_id);
-- Pruning deletes the expired ones, oldest first.
CREATE INDEX ui_sessions_by_expiry ON ui_sessions (expires_at);
