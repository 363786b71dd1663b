import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, verifyToken } from '../../src/auth/tokens.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { TOKEN_CACHE_MS } from '../../src/store/postgres/token-cache.js';
import { type FreshDatabase, freshDatabase, postgresAvailable } from '../support/postgres.js';
import { givenPlan, T0 } from './contract/fixtures.js';

// What the PostgreSQL store keeps between reads, on a real database: tokens (token-cache.ts), refused once
// revoked within TOKEN_CACHE_MS by the clock the store is given, at once when revoked through the same
// store; and the plans version (versions.ts), which this store's own writes move at once.

const SUITE = 'PostgreSQL store (kept reads)';
const up = await postgresAvailable(SUITE);

let db: FreshDatabase | null = null;
const stores: PostgresStore[] = [];

async function open(clock?: () => number): Promise<PostgresStore> {
  const store = await openPostgresStore({ url: db!.url, now: () => T0, ...(clock ? { clock } : {}) });
  stores.push(store);
  return store;
}

describe.skipIf(!up)(SUITE, () => {
  beforeAll(async () => {
    db = await freshDatabase();
  });

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await db?.drop();
  });

  it('refuses a token another process revoked once the cache bound has passed on its clock', async () => {
    let now = T0;
    const daemon = await open(() => now);
    const cli = await open();
    const { token, record } = issueToken('ci', 'ci-bot', 'approver', T0);
    await cli.createToken(record);
    expect(await verifyToken(daemon, token)).toMatchObject({ identity: 'ci-bot', role: 'approver' });

    expect(await cli.revokeToken(record.id, T0 + 1)).toBe(true);
    // Within the bound the daemon may still use what it read; not past it.
    now = T0 + TOKEN_CACHE_MS - 1;
    expect(await verifyToken(daemon, token)).not.toBeNull();
    now = T0 + TOKEN_CACHE_MS;
    expect(await verifyToken(daemon, token)).toBeNull();
    expect((await daemon.findToken(record.id))?.revokedAt).toBe(T0 + 1);
  });

  it('refuses a token revoked through the same store at once', async () => {
    const now = T0;
    const daemon = await open(() => now);
    const { token, record } = issueToken('ops', 'olga', 'operator', T0);
    await daemon.createToken(record);
    expect(await verifyToken(daemon, token)).not.toBeNull();
    expect(await daemon.revokeToken(record.id, T0 + 1)).toBe(true);
    expect(await verifyToken(daemon, token)).toBeNull();
  });

  it("moves the plans version at once on the store's own writes, and on another's once heard", async () => {
    const store = await open();
    const other = await open();
    const v0 = await store.plansVersion();
    expect(await store.plansVersion()).toBe(v0);
    await givenPlan(store, 'pln_own');
    const v1 = await store.plansVersion();
    expect(v1).toBeGreaterThan(v0);
    await givenPlan(other, 'pln_other');
    // Heard through the listener (or read again after at most a second).
    const end = Date.now() + 5_000;
    while ((await store.plansVersion()) === v1 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 10));
    expect(await store.plansVersion()).toBeGreaterThan(v1);
  });
});
