import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/store.js';

// The approver page's session: a cookie holding token id, identity and expiry, signed with HMAC-SHA256
// under a per-daemon secret. The bearer token itself never goes into the cookie; every request re-checks
// that the token still exists and is not revoked.

export const SESSION_COOKIE = 'drydock_ui';
/** Binds the login form to the browser that loaded it (login CSRF). */
export const LOGIN_COOKIE = 'drydock_ui_login';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const LOGIN_NONCE_TTL_S = 30 * 60;

const SECRET_KEY = 'ui_secret';

export interface SessionClaims {
  tokenId: string;
  identity: string;
  expiresAt: number;
}

/**
 * The signing secret, generated once and kept in the store so that sessions survive a restart and are
 * valid on every daemon of a deployment. Loaded once per process.
 */
export class UiSecret {
  private loading: Promise<Buffer> | null = null;

  constructor(private readonly store: Store) {}

  get(): Promise<Buffer> {
    this.loading ??= this.load().catch((err) => {
      this.loading = null;
      throw err;
    });
    return this.loading;
  }

  private async load(): Promise<Buffer> {
    const existing = await this.store.getState(SECRET_KEY);
    if (existing) return Buffer.from(existing, 'base64url');
    await this.store.setState(SECRET_KEY, randomBytes(32).toString('base64url'));
    // Read back rather than trust our own value: another daemon on the same store may have written first.
    const stored = await this.store.getState(SECRET_KEY);
    if (!stored) throw new Error('ui: the session secret could not be stored');
    return Buffer.from(stored, 'base64url');
  }
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const mac = (secret: Buffer, purpose: string, data: string) =>
  createHmac('sha256', secret).update(`${purpose}\n${data}`).digest();

/** `<token id>.<identity>.<expiry ms>.<mac>`, the first two base64url-encoded. */
export function signSession(secret: Buffer, claims: SessionClaims): string {
  const payload = `${b64(claims.tokenId)}.${b64(claims.identity)}.${claims.expiresAt}`;
  return `${payload}.${mac(secret, 'session', payload).toString('base64url')}`;
}

/** The claims of a well-signed, unexpired session value; null otherwise. */
export function readSession(secret: Buffer, value: string, now: number): SessionClaims | null {
  const parts = value.split('.');
  if (parts.length !== 4) return null;
  const [tokenId, identity, expiry, signature] = parts as [string, string, string, string];
  const payload = `${tokenId}.${identity}.${expiry}`;
  if (!equalBytes(Buffer.from(signature, 'base64url'), mac(secret, 'session', payload))) return null;
  const expiresAt = Number(expiry);
  if (!/^\d{1,16}$/.test(expiry) || expiresAt <= now) return null;
  return {
    tokenId: Buffer.from(tokenId, 'base64url').toString('utf8'),
    identity: Buffer.from(identity, 'base64url').toString('utf8'),
    expiresAt,
  };
}

/** The CSRF token every form carries: HMAC(secret, 'csrf:' + session value). */
export function csrfToken(secret: Buffer, sessionValue: string): string {
  return createHmac('sha256', secret).update(`csrf:${sessionValue}`).digest('base64url');
}

export function checkCsrf(secret: Buffer, sessionValue: string, presented: string | undefined): boolean {
  if (!presented) return false;
  return equalBytes(Buffer.from(presented, 'utf8'), Buffer.from(csrfToken(secret, sessionValue), 'utf8'));
}

export function newLoginNonce(): string {
  return randomBytes(18).toString('base64url');
}

/** Constant time for equal lengths; a length mismatch says nothing about the content. */
function equalBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
