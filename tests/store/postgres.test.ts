import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { type FreshDatabase, freshDatabase, postgresAvailable } from '../support/postgres.js';
import { T0 } from './contract/fixtures.js';
import { type StoreFactory, storeContract } from './contract/index.js';

// The Store contract on the PostgreSQL store (src/store/postgres/): each test gets a database of its own,
// copied from one this file migrates once. A second store on the same database (a pool of its own) stands
// in for a second replica in the races. Skipped with one line on stderr when there is no server (failing
// instead under DRYDOCK_REQUIRE_POSTGRES=1), or while src/store/postgres/ is not part of this tree.

const SUITE = 'store contract (PostgreSQL)';

/** What this suite needs of src/store/postgres/index.ts. */
type OpenPostgresStore = (opts: { url: string; now?: () => number }) => Promise<Store>;

async function postgresStoreOpener(): Promise<OpenPostgresStore | null> {
  const module = new URL('../../src/store/postgres/index.ts', import.meta.url);
  if (!existsSync(fileURLToPath(module))) {
    process.stderr.write(`${SUITE}: skipped, there is no src/store/postgres/index.ts in this tree\n`);
    return null;
  }
  if (!(await postgresAvailable(SUITE))) return null;
  // Imported by name at run time, so that this file type-checks in a tree without the PostgreSQL store.
  const loaded = (await import(/* @vite-ignore */ module.href)) as { openPostgresStore: OpenPostgresStore };
  return loaded.openPostgresStore;
}

const openPostgresStore = await postgresStoreOpener();

describe.skipIf(openPostgresStore === null)('PostgreSQL store', () => {
  const open = openPostgresStore!;
  let template: FreshDatabase | null = null;

  beforeAll(async () => {
    template = await freshDatabase();
    const migrated = await open({ url: template.url, now: () => T0 });
    // No session may stay on a template while it is copied.
    await migrated.close();
  });
  afterAll(async () => {
    await template?.drop();
  });

  const postgresStore: StoreFactory = async () => {
    const db = await freshDatabase({ template: template!.name });
    const store = await open({ url: db.url, now: () => T0 });
    return {
      store,
      open: () => open({ url: db.url, now: () => T0 }),
      close: async () => {
        await store.close();
        await db.drop();
      },
    };
  };

  storeContract(postgresStore);
});
