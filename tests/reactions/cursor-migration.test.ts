import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/store/migrations.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { loadPostgresMigrations } from '../../src/store/postgres/migrate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { T0, tempDir } from '../support/harness.js';
import { freshDatabase, postgresAvailable } from '../support/postgres.js';

// The notifier kept its cursor in scheduler_state before reactions had cursors of their own: the migration
// that makes reaction_cursors carries it over, so an upgrade neither announces an event again nor skips one.

const pgUp = await postgresAvailable('cursor migration (PostgreSQL)');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the notification cursor becomes the notifications reaction cursor', () => {
  it('SQLite (migration 20)', async () => {
    const tmp = tempDir('drydock-cursor-migration-');
    cleanups.push(() => tmp.remove());
    const file = join(tmp.path, 'drydock.db');
    const all = loadMigrations();
    const before = all.filter((m) => m.version < 20);
    const old = new SqliteStore({ file, migrations: before, now: () => T0 });
    await old.enqueueNotifications([], 42);
    await old.close();
    const upgraded = new SqliteStore({ file, migrations: all, now: () => T0 });
    cleanups.push(() => upgraded.close());
    expect(await upgraded.reactionCursor('notifications')).toBe(42);
    expect(await upgraded.reactionCursor('github_report')).toBeNull();
  });

  it('SQLite without a notification cursor (notifications never started): none, placed at the first start', async () => {
    const tmp = tempDir('drydock-cursor-migration-');
    cleanups.push(() => tmp.remove());
    const store = new SqliteStore({ file: join(tmp.path, 'drydock.db'), now: () => T0 });
    cleanups.push(() => store.close());
    expect(await store.reactionCursor('notifications')).toBeNull();
  });

  it.skipIf(!pgUp)('PostgreSQL (migration 10)', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const all = loadPostgresMigrations();
    const old = await openPostgresStore({
      url: db.url,
      migrations: all.filter((m) => m.version < 10),
      now: () => T0,
    });
    await old.enqueueNotifications([], 42);
    await old.close();
    const upgraded = await openPostgresStore({ url: db.url, migrations: all, now: () => T0 });
    cleanups.push(() => upgraded.close());
    expect(await upgraded.reactionCursor('notifications')).toBe(42);
  });
});
