import { randomBytes } from 'node:crypto';

/** Opaque ids: a short type prefix and 96 random bits, URL-safe. */
export function newId(
  prefix: 'ses' | 'job' | 'run' | 'tok' | 'qst' | 'pln' | 'tap' | 'dec' | 'trg' | 'dlv',
): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
