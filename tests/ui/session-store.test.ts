import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { UiSession } from '../../src/domain/types.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { T0, tempDir } from '../support/harness.js';

// The store's side of /ui sessions, on a real SQLite file.

const HOUR = 60 * 60 * 1000;

let tmp: ReturnType<typeof tempDir>;
let store: SqliteStore;
beforeEach(() => {
  tmp = tempDir('drydock-ui-sessions-');
  store = new SqliteStore({ file: join(tmp.path, 'drydock.db'), now: () => T0 });
});
afterEach(async () => {
  await store.close();
  tmp.remove();
});

const key = (name: string) => createHash('sha256').update(name).digest();

async function token(identity: string): Promise<string> {
  const issued = issueToken(identity, identity, 'approver', T0);
  await store.createToken(issued.record);
  return issued.record.id;
}

async function session(
  name: string,
  tokenId: string,
  over: Partial<Omit<UiSession, 'revokedAt'>> = {},
): Promise<Buffer> {
  const idHash = key(name);
  await store.createUiSession({
    idHash,
    tokenId,
    identity: 'ann',
    createdAt: T0,
    expiresAt: T0 + 12 * HOUR,
    ...over,
  });
  return idHash;
}

const revokedAt = (idHash: Buffer) =>
  store.db.prepare('SELECT revoked_at FROM ui_sessions WHERE id_hash = ?').pluck().get(idHash);

describe('ui sessions in the store', () => {
  it('finds a session by its id hash until it expires', async () => {
    const tok = await token('ann');
    const s = await session('s1', tok);
    expect(await store.findUiSession(s, T0)).toEqual({
      idHash: s,
      tokenId: tok,
      identity: 'ann',
      createdAt: T0,
      expiresAt: T0 + 12 * HOUR,
      revokedAt: null,
    });
    expect(await store.findUiSession(s, T0 + 12 * HOUR - 1)).not.toBeNull();
    expect(await store.findUiSession(s, T0 + 12 * HOUR)).toBeNull();
    expect(await store.findUiSession(key('unknown'), T0)).toBeNull();
  });

  it('accepts a session only for a token it knows', async () => {
    await expect(session('s1', 'no-such-token')).rejects.toThrow(/FOREIGN KEY/);
  });

  it('revokes one session, once', async () => {
    const tok = await token('ann');
    const s1 = await session('s1', tok);
    const s2 = await session('s2', tok);
    expect(await store.revokeUiSession(s1, T0 + 5)).toBe(true);
    expect(await store.revokeUiSession(s1, T0 + 6)).toBe(false);
    expect(await store.revokeUiSession(key('unknown'), T0 + 6)).toBe(false);
    expect(await store.findUiSession(s1, T0 + 7)).toBeNull();
    expect(revokedAt(s1)).toBe(T0 + 5);
    expect(await store.findUiSession(s2, T0 + 7)).not.toBeNull();
  });

  it("revokes every live session of a token, and no other token's", async () => {
    const ann = await token('ann');
    const bob = await token('bob');
    const a1 = await session('a1', ann);
    const a2 = await session('a2', ann);
    const a3 = await session('a3', ann);
    const b1 = await session('b1', bob, { identity: 'bob' });
    await store.revokeUiSession(a3, T0 + 1);
    expect(await store.revokeTokenUiSessions(ann, T0 + 2)).toBe(2);
    expect([revokedAt(a1), revokedAt(a2), revokedAt(a3)]).toEqual([T0 + 2, T0 + 2, T0 + 1]);
    expect(await store.findUiSession(b1, T0 + 3)).not.toBeNull();
    expect(await store.revokeTokenUiSessions(ann, T0 + 4)).toBe(0);
  });

  it('revokes a token together with its sessions', async () => {
    const ann = await token('ann');
    const bob = await token('bob');
    const a1 = await session('a1', ann);
    const b1 = await session('b1', bob, { identity: 'bob' });
    expect(await store.revokeToken(ann, T0 + 10)).toBe(true);
    expect((await store.findToken(ann))!.revokedAt).toBe(T0 + 10);
    expect(revokedAt(a1)).toBe(T0 + 10);
    expect(await store.findUiSession(b1, T0 + 11)).not.toBeNull();
    expect((await store.findToken(bob))!.revokedAt).toBeNull();
    // Again: nothing changes, the first revocation time stays.
    expect(await store.revokeToken(ann, T0 + 20)).toBe(false);
    expect((await store.findToken(ann))!.revokedAt).toBe(T0 + 10);
    expect(revokedAt(a1)).toBe(T0 + 10);
    expect(await store.revokeToken('no-such-token', T0 + 20)).toBe(false);
  });

  it('revokes a token and its sessions in one transaction: both or neither', async () => {
    const ann = await token('ann');
    const a1 = await session('a1', ann);
    store.db.exec(`CREATE TEMP TRIGGER refuse BEFORE UPDATE ON ui_sessions
                   BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
    await expect(store.revokeToken(ann, T0 + 10)).rejects.toThrow(/refused for the test/);
    expect((await store.findToken(ann))!.revokedAt).toBeNull();
    store.db.exec('DROP TRIGGER refuse');
    expect(await store.findUiSession(a1, T0 + 11)).not.toBeNull();
  });

  it('prunes expired sessions, oldest first and at most `limit`, keeping revoked ones until they expire', async () => {
    const ann = await token('ann');
    await session('old1', ann, { expiresAt: T0 + 1 });
    await session('old2', ann, { expiresAt: T0 + 2 });
    const old3 = await session('old3', ann, { expiresAt: T0 + 3 });
    const revoked = await session('revoked', ann);
    const live = await session('live', ann);
    await store.revokeUiSession(revoked, T0);
    const left = () =>
      (store.db.prepare('SELECT id_hash FROM ui_sessions').pluck().all() as Buffer[]).map((b) =>
        b.toString('hex'),
      );

    expect(await store.pruneUiSessions(T0 + 10, 2)).toBe(2);
    expect(left().sort()).toEqual([old3, revoked, live].map((b) => b.toString('hex')).sort());
    expect(await store.pruneUiSessions(T0 + 10, 100)).toBe(1);
    expect(await store.pruneUiSessions(T0 + 10, 100)).toBe(0);
    expect(left().sort()).toEqual([revoked, live].map((b) => b.toString('hex')).sort());
    expect(await store.pruneUiSessions(T0 + 12 * HOUR, 100)).toBe(2);
    expect(left()).toEqual([]);
  });
});

describe('migration 8', () => {
  it('upgrades a version 7 database: its tokens keep working and gain /ui sessions', async () => {
    const file = join(tmp.path, 'old.db');
    const old = new SqliteStore({ file, migrations: loadMigrations().slice(0, 7), now: () => T0 });
    const issued = issueToken('ann', 'ann', 'approver', T0);
    await old.createToken(issued.record);
    expect(
      old.db.prepare(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'ui_sessions'`).pluck().get(),
    ).toBe(0);
    await old.close();

    const upgraded = new SqliteStore({ file, migrations: loadMigrations().slice(0, 8), now: () => T0 });
    try {
      expect(await upgraded.schemaVersion()).toEqual({ current: 8, latest: 8 });
      expect(
        upgraded.db.prepare('SELECT version, name FROM schema_migrations WHERE version = 8').get(),
      ).toEqual({ version: 8, name: 'ui_sessions' });
      expect(
        upgraded.db
          .prepare(
            `SELECT name FROM sqlite_master WHERE tbl_name = 'ui_sessions' AND type = 'index' ORDER BY name`,
          )
          .pluck()
          .all(),
      ).toEqual(expect.arrayContaining(['ui_sessions_by_expiry', 'ui_sessions_by_token']));
      expect((await upgraded.findToken(issued.record.id))!.identity).toBe('ann');
      const idHash = key('s1');
      await upgraded.createUiSession({
        idHash,
        tokenId: issued.record.id,
        identity: 'ann',
        createdAt: T0,
        expiresAt: T0 + HOUR,
      });
      expect((await upgraded.findUiSession(idHash, T0))!.tokenId).toBe(issued.record.id);
      expect(await upgraded.revokeToken(issued.record.id, T0 + 1)).toBe(true);
      expect(await upgraded.findUiSession(idHash, T0 + 2)).toBeNull();
    } finally {
      await upgraded.close();
    }
  });
});
