import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, REPLICA_NAME } from '../config/schema.js';

/** The file in data_dir that keeps a replica's name when `replica_id` is not set. */
export const REPLICA_FILE = 'replica-id';

/**
 * This daemon's name among the replicas on one database (claims on runs carry it): `replica_id` when set,
 * else the name kept in data_dir, made once at the first start. A restarted replica keeps its name, so it
 * takes its own runs back at once instead of waiting for their leases to run out. Two replicas must not share
 * a data_dir.
 */
export function replicaId(config: Pick<Config, 'replica_id' | 'data_dir'>): string {
  if (config.replica_id !== null) return config.replica_id;
  const file = join(config.data_dir, REPLICA_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (REPLICA_NAME.test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const made = `r-${randomBytes(6).toString('hex')}`;
  // Written whole or not at all: a crash midway leaves no half a name.
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${made}\n`, { mode: 0o600 });
  renameSync(partial, file);
  return made;
}
