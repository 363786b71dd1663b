import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// A generic trigger's bearer token reads `ddt_<id>.<secret>`; only the secret's sha256 is stored.

const FORMAT = /^ddt_([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;
const hash = (secret: string) => createHash('sha256').update(secret).digest();

export function issueTriggerToken(): { token: string; tokenId: string; tokenHash: Buffer } {
  const tokenId = randomBytes(12).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  return { token: `ddt_${tokenId}.${secret}`, tokenId, tokenHash: hash(secret) };
}

/** Splits a presented token; null when it is not shaped like one. */
export function parseTriggerToken(token: string): { tokenId: string; secret: string } | null {
  const m = FORMAT.exec(token);
  return m ? { tokenId: m[1]!, secret: m[2]! } : null;
}

export function secretMatches(secret: string, stored: Buffer | null): boolean {
  const digest = hash(secret);
  return stored !== null && stored.length === digest.length && timingSafeEqual(digest, stored);
}
