import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPLICA_FILE, replicaId } from '../../src/runs/replica.js';
import { tempDir } from '../support/harness.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

it('replica_id wins; without it a name is made once and kept in data_dir', () => {
  const tmp = tempDir('drydock-replica-');
  dirs.push(tmp);
  expect(replicaId({ replica_id: 'east-1', data_dir: tmp.path })).toBe('east-1');
  const made = replicaId({ replica_id: null, data_dir: tmp.path });
  expect(made).toMatch(/^r-[0-9a-f]{12}$/);
  expect(readFileSync(join(tmp.path, REPLICA_FILE), 'utf8')).toBe(`${made}\n`);
  // A restart keeps it; another data_dir makes another.
  expect(replicaId({ replica_id: null, data_dir: tmp.path })).toBe(made);
  const other = tempDir('drydock-replica-');
  dirs.push(other);
  expect(replicaId({ replica_id: null, data_dir: other.path })).not.toBe(made);
  // A file that holds no usable name (emptied, edited by hand) is replaced.
  writeFileSync(join(tmp.path, REPLICA_FILE), 'not a name!\n');
  const again = replicaId({ replica_id: null, data_dir: tmp.path });
  expect(again).toMatch(/^r-[0-9a-f]{12}$/);
  expect(again).not.toBe(made);
});
