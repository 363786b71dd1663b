import { decodeCursor } from '../paging.js';
import { InvalidCursorError } from '../store.js';

// Building a listing's query in the shared SQL (`?` placeholders, see dialect.ts).

/** `col = ?` conditions for the filters that are set (undefined means: not filtered), and their values. */
export function equalities(filters: [string, unknown][]): { where: string[]; values: unknown[] } {
  const set = filters.filter(([, value]) => value !== undefined);
  return { where: set.map(([col]) => `${col} = ?`), values: set.map(([, value]) => value) };
}

export function whereSql(where: string[]): string {
  return where.length ? `WHERE ${where.join(' AND ')}` : '';
}

/**
 * Continues a keyset page (see paging.ts): rows after the cursor in the listing's order. The casts give
 * PostgreSQL the types of the pair (SQLite reads them as it would the bare values).
 */
export function addCursor(
  cursor: string | undefined,
  where: string[],
  values: unknown[],
  dir: 'asc' | 'desc',
): void {
  if (!cursor) return;
  const c = decodeCursor(cursor);
  if (!c) throw new InvalidCursorError();
  const pair = '(CAST(? AS BIGINT), CAST(? AS TEXT))';
  where.push(dir === 'asc' ? `(created_at, id) > ${pair}` : `(created_at, id) < ${pair}`);
  values.push(c.createdAt, c.id);
}
