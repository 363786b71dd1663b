import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiToken, Role } from '../domain/types.js';
import type { StateStore } from '../store/store.js';

// A token reads `ddk_<id>.<secret>`: the id finds the row, the secret is checked against its stored sha256
// in constant time. The secret has 256 random bits, so a plain hash is enough (nothing to brute-force).

const PREFIX = 'ddk_';
const FORMAT = /^ddk_([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;

export interface Identity {
  tokenId: string;
  identity: string;
  role: Role;
}

export interface IssuedToken {
  token: string;
  record: ApiToken;
}

const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret).digest();

/**
 * A new token's id: 16 base64url characters (96 random bits) that start with a letter or a digit, so that
 * the id never reads as an option on a command line (`drydock token revoke -J…`). Ids issued before this
 * rule may still start with `-` or `_`; `token revoke` takes those too.
 */
export function newTokenId(random: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const id = random(12).toString('base64url');
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

/** What a token id looks like: 16 base64url characters (the id part of `ddk_<id>.<secret>`). */
export const TOKEN_ID = /^[A-Za-z0-9_-]{16}$/;

export function issueToken(name: string, identity: string, role: Role, now: number): IssuedToken {
  const id = newTokenId();
  const secret = randomBytes(32).toString('base64url');
  return {
    token: `${PREFIX}${id}.${secret}`,
    record: { id, name, identity, role, secretHash: hashSecret(secret), createdAt: now, revokedAt: null },
  };
}

/**
 * An operator-chosen admin token (DRYDOCK_ADMIN_TOKEN) need not follow the format: its id is derived from
 * its hash so that the same value always maps to the same row.
 */
export function adoptToken(token: string, name: string, role: Role, now: number): IssuedToken {
  const m = FORMAT.exec(token);
  if (m) {
    return {
      token,
      record: {
        id: m[1]!,
        name,
        identity: name,
        role,
        secretHash: hashSecret(m[2]!),
        createdAt: now,
        revokedAt: null,
      },
    };
  }
  const id = `x${hashSecret(`id:${token}`).toString('base64url').slice(0, 15)}`;
  return {
    token,
    record: {
      id,
      name,
      identity: name,
      role,
      secretHash: hashSecret(token),
      createdAt: now,
      revokedAt: null,
    },
  };
}

function splitToken(token: string): { id: string; secret: string } {
  const m = FORMAT.exec(token);
  if (m) return { id: m[1]!, secret: m[2]! };
  return { id: `x${hashSecret(`id:${token}`).toString('base64url').slice(0, 15)}`, secret: token };
}

/** Resolves a presented bearer token to its identity, or null. Never says which part was wrong. */
export async function verifyToken(store: StateStore, presented: string): Promise<Identity | null> {
  if (presented.length < 8 || presented.length > 512) return null;
  const { id, secret } = splitToken(presented);
  const record = await store.findToken(id);
  // Hash either way so that an unknown id costs the same as a wrong secret.
  const digest = hashSecret(secret);
  if (!record || record.revokedAt !== null) return null;
  if (!timingSafeEqual(digest, record.secretHash)) return null;
  return { tokenId: record.id, identity: record.identity, role: record.role };
}

const RANK: Record<Role, number> = { viewer: 0, approver: 1, operator: 2, admin: 3 };

/**
 * Role checks. Roles are not a strict ladder: an approver decides plans and answers questions but cannot
 * create sessions or jobs; an operator can do both; an admin everything.
 */
export type Permission = 'read' | 'operate' | 'decide' | 'admin';

export function allows(role: Role, permission: Permission): boolean {
  switch (permission) {
    case 'read':
      return true;
    case 'operate':
      return RANK[role] >= RANK.operator;
    case 'decide':
      return role === 'approver' || RANK[role] >= RANK.operator;
    case 'admin':
      return role === 'admin';
  }
}
