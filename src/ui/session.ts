import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Identity } from '../auth/tokens.js';
import type { UiSession } from '../domain/types.js';
import type { StateStore } from '../store/store.js';

// The approver page's session lives in the store (ui_sessions); the cookie holds only its random id,
// signed with HMAC-SHA256 under a per-daemon secret. The store keeps the id's sha256, never the id, so a
// copy of the database yields no working cookie. Signing out or revoking the token revokes the row; every
// request looks the row up and re-checks that its token still exists and is not revoked. The bearer token
// itself never goes into the cookie.

export const SESSION_COOKIE = 'drydock_ui';
/** Binds the login form to the browser that loaded it (login CSRF). */
export const LOGIN_COOKIE = 'drydock_ui_login';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const LOGIN_NONCE_TTL_S = 30 * 60;

const SECRET_KEY = 'ui_secret';

/**
 * The signing secret, generated once and kept in the store so that sessions survive a restart and are
 * valid on every daemon of a deployment. Loaded once per process.
 */
export class UiSecret {
  private loading: Promise<Buffer> | null = null;

  constructor(private readonly store: StateStore) {}

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

const mac = (secret: Buffer, purpose: string, data: string) =>
  createHmac('sha256', secret).update(`${purpose}\n${data}`).digest('base64url');
const hashId = (id: string): Buffer => createHash('sha256').update(id).digest();

/** 256 random bits, base64url. */
const ID = /^[A-Za-z0-9_-]{43}$/;

/** A new session for a verified token: the cookie value `<id>.<mac>` and the row to store. */
export function newSession(
  secret: Buffer,
  who: Identity,
  now: number,
): { value: string; record: Omit<UiSession, 'revokedAt'> } {
  const id = randomBytes(32).toString('base64url');
  return {
    value: `${id}.${mac(secret, 'session', id)}`,
    record: {
      idHash: hashId(id),
      tokenId: who.tokenId,
      identity: who.identity,
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
    },
  };
}

/** The stored key (sha256 of the id) of a well-signed session value; null otherwise. */
export function sessionKey(secret: Buffer, value: string): Buffer | null {
  const parts = value.split('.');
  if (parts.length !== 2) return null;
  const [id, signature] = parts as [string, string];
  if (!ID.test(id) || !equalBytes(Buffer.from(signature), Buffer.from(mac(secret, 'session', id))))
    return null;
  return hashId(id);
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
