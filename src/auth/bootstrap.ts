import type { StateStore } from '../store/store.js';
import { adoptToken, issueToken } from './tokens.js';

export type AdminBootstrap =
  | { kind: 'created'; token: string } // generated now: print it once
  | { kind: 'adopted' } // DRYDOCK_ADMIN_TOKEN became the admin token
  | { kind: 'existing' }; // an admin token exists already

/** First start: make sure someone can administer the daemon. */
export async function ensureAdminToken(
  store: StateStore,
  configured: string | null,
  now: number,
): Promise<AdminBootstrap> {
  if ((await store.countActiveTokens('admin')) > 0) return { kind: 'existing' };
  if (configured) {
    try {
      await store.createToken(adoptToken(configured, 'admin', 'admin', now).record);
    } catch (err) {
      // Replicas started at the same moment on a new database adopt the same token: one insert wins.
      if ((await store.countActiveTokens('admin')) > 0) return { kind: 'existing' };
      throw err;
    }
    return { kind: 'adopted' };
  }
  const issued = issueToken('admin', 'admin', 'admin', now);
  await store.createToken(issued.record);
  return { kind: 'created', token: issued.token };
}
