import type { Page } from '../domain/types.js';

// Keyset paging over (created_at, id), the same for every backend: a cursor one store issued is one any
// store on the same data understands.

/** Opaque keyset cursor over (created_at, id). */
export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(`${createdAt}:${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const i = text.indexOf(':');
  const createdAt = Number(text.slice(0, i));
  if (i <= 0 || !Number.isSafeInteger(createdAt)) return null;
  return { createdAt, id: text.slice(i + 1) };
}

/**
 * One page of `limit` items out of the `limit + 1` a query read; the extra one only says that more follow,
 * and the cursor continues after the last item kept.
 */
export function page<T extends { createdAt: number; id: string }>(items: T[], limit: number): Page<T> {
  if (items.length <= limit) return { items, nextCursor: null };
  const kept = items.slice(0, limit);
  const last = kept[kept.length - 1]!;
  return { items: kept, nextCursor: encodeCursor(last.createdAt, last.id) };
}
