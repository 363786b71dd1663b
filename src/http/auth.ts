import type { MiddlewareHandler } from 'hono';
import { allows, type Identity, type Permission, verifyToken } from '../auth/tokens.js';
import type { Store } from '../store/store.js';
import { HttpError } from './errors.js';

export interface AuthVariables {
  identity: Identity;
}

/** Resolves `Authorization: Bearer <token>` to an identity; 401 when missing or not recognised. */
export function authenticate(store: Store): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw new HttpError(401, 'unauthorized', 'missing bearer token (Authorization: Bearer <token>)');
    const identity = await verifyToken(store, m[1]!);
    if (!identity) throw new HttpError(401, 'unauthorized', 'invalid or revoked token');
    c.set('identity', identity);
    await next();
  };
}

/** 403 unless the caller's role grants `permission`. */
export function requires(permission: Permission): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const { role } = c.get('identity');
    if (!allows(role, permission)) {
      throw new HttpError(403, 'forbidden', `role ${role} may not do this (needs ${permission} permission)`);
    }
    await next();
  };
}
