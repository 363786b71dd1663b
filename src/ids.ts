import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in blocks: one call into the CSPRNG serves hundreds of ids instead of one. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** `bytes` fresh random bytes from the pool, URL-safe base64. */
function random(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return out;
}

/** Opaque ids: a short type prefix and 96 random bits, URL-safe. */
export function newId(
  prefix: 'ses' | 'job' | 'run' | 'tok' | 'qst' | 'pln' | 'tap' | 'dec' | 'trg' | 'dlv',
): string {
  return `${prefix}_${random(12)}`;
}

/**
 * An id that sorts by creation time: the millisecond in base 36 (fixed width), then 48 random bits. Rows
 * written at a high rate (webhook deliveries) then append to the end of their primary-key index instead of
 * landing on a random page of it.
 */
export function sortableId(prefix: 'dlv'): string {
  return `${prefix}_${Date.now().toString(36).padStart(9, '0')}${random(6)}`;
}
