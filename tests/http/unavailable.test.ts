import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { SESSION_COOKIE } from '../../src/ui/session.js';
import { createHarness, type Harness } from '../support/harness.js';

// When the database cannot be reached (a PostgreSQL restart, a network cut), requests are answered 503 with
// Retry-After, never a bare 500, and the daemon stays up.

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => h.close());

/** Every store call fails as the PostgreSQL store fails when its server is gone. */
function cutTheDatabase(): void {
  const gone = async () => {
    throw new StoreUnavailableError(
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }),
    );
  };
  const store = h.store as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(store)) {
    if (typeof value === 'function' && name !== 'close') store[name] = gone;
  }
}

describe('an unreachable database', () => {
  it('is a 503 with Retry-After on the API, naming no host', async () => {
    cutTheDatabase();
    const res = await h.call('GET', '/v1/sessions');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body).toEqual({
      error: { code: 'unavailable', message: 'the database cannot be reached; try again shortly' },
    });
    expect(JSON.stringify(res.body)).not.toContain('10.0.0.5');
    // Readiness says so too (its own 503 body).
    const ready = await h.call('GET', '/readyz', { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body.checks.store).toBe(false);
  });

  it('is a 503 page with Retry-After on the web UI', async () => {
    cutTheDatabase();
    const res = await h.call('GET', '/ui', { token: null, headers: { cookie: `${SESSION_COOKIE}=abc` } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(String(res.body)).toContain('The database cannot be reached right now.');
  });

  it('is what the PostgreSQL store throws when no server answers', async () => {
    // A port nothing listens on: the pool's connect is refused.
    const store = await openPostgresStore({ url: 'postgres://drydock:pw@127.0.0.1:1/none', migrate: false });
    try {
      const err = await store.getSession('ses_x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as StoreUnavailableError).cause).toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      await store.close();
    }
  });
});
