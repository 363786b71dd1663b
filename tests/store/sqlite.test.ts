import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_NETWORK_DOMAINS, normalizedDomains } from '../../src/domain/network.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { givenPlan, givenRun, T0 } from './contract/fixtures.js';
import { type StoreFactory, storeContract } from './contract/index.js';

// The Store contract on the embedded store: a fresh database file for each test. A second SqliteStore on
// the same file stands in for a second process.

const sqliteStore: StoreFactory = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-store-contract-'));
  const file = join(dir, 'drydock.db');
  const store = new SqliteStore({ file, now: () => T0 });
  return {
    store,
    open: async () => new SqliteStore({ file, now: () => T0 }),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

describe('SQLite store', () => {
  storeContract(sqliteStore);
});

describe('SQLite store: wake-ups', () => {
  it('onWake returns an unsubscribe and never calls its listener (one process wakes itself)', async () => {
    const { store, close } = await sqliteStore();
    try {
      const calls: string[] = [];
      const offs = (['runs', 'events', 'inbox', 'outbox'] as const).map((channel) =>
        store.onWake(channel, (payload) => calls.push(`${channel}:${payload}`)),
      );
      await givenRun(store, 'run_1');
      await store.appendEvent('run_1', 'run.started', {}, T0);
      await new Promise((r) => setTimeout(r, 50));
      for (const off of offs) {
        expect(typeof off).toBe('function');
        off();
        off();
      }
      expect(calls).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('SQLite store: plans made before network lists', () => {
  it('reads one with the network allowed as the configured default list, one without as none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-store-legacy-'));
    const file = join(dir, 'drydock.db');
    const store = new SqliteStore({
      file,
      now: () => T0,
      legacyNetworkDomains: ['PyPI.org', 'files.pythonhosted.org'],
    });
    const plain = new SqliteStore({ file, now: () => T0 });
    try {
      await givenPlan(store, 'pln_old');
      await givenPlan(store, 'pln_off');
      // As a plan of schema 14 was stored: the boolean alone.
      store.db.prepare(`UPDATE plans SET network = (id = 'pln_old'), network_domains = NULL`).run();
      expect((await store.getPlan('pln_old'))!.network).toEqual(['files.pythonhosted.org', 'pypi.org']);
      expect((await store.getPlan('pln_off'))!.network).toEqual([]);
      expect((await plain.getPlan('pln_old'))!.network).toEqual(normalizedDomains(DEFAULT_NETWORK_DOMAINS));
    } finally {
      await plain.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
