import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { T0 } from './contract/fixtures.js';
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
