import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in blocks: one call into the CSPRNG serves 256 ids instead of one. */
const pool = Buffer.alloc(12 * 256);
let offset = pool.length;

/** Opaque ids: a short type prefix and 96 random bits, URL-safe. */
export function newId(
  prefix: 'ses' | 'job' | 'run' | 'tok' | 'qst' | 'pln' | 'tap' | 'dec' | 'trg' | 'dlv',
): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + 12);
  offset += 12;
  return `${prefix}_${id}`;
}
