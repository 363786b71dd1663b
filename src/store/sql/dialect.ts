/**
 * SQL both backends run is written once, with `?` placeholders (SQLite's own); a `Dialect` turns such a text
 * into what its backend runs and says how the few constructs that differ are spelled. Values are passed in
 * the order of their placeholders on both backends, so one statement builder serves both.
 */

/** One statement: its text (with `?` placeholders) and its values, in the order of their placeholders. */
export interface Statement {
  text: string;
  values: unknown[];
}

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** A text written with `?` placeholders as this backend runs it. */
  sql(text: string): string;
  /**
   * The row lock a SELECT takes to the end of its transaction, as a suffix ('' on SQLite: its writers take
   * turns on the whole file, so no row lock is needed or spelled).
   */
  lock(strength: 'share' | 'no key update' | 'update'): string;
  /** A number read from a JSON column's top-level field (`field` is a constant, never a value). */
  jsonNumber(column: string, field: string): string;
  /** The larger of two numbers (SQLite's two-argument MAX, PostgreSQL's GREATEST). */
  greatest(a: string, b: string): string;
}

export const SQLITE: Dialect = {
  name: 'sqlite',
  sql: (text) => text,
  lock: () => '',
  jsonNumber: (column, field) => `json_extract(${column}, '$.${field}')`,
  greatest: (a, b) => `MAX(${a}, ${b})`,
};

/** Texts already numbered, by their `?` form (statement texts are few and reused: each is numbered once). */
const numbered = new Map<string, string>();

export const POSTGRES: Dialect = {
  name: 'postgres',
  sql(text) {
    let out = numbered.get(text);
    if (out === undefined) {
      out = numberPlaceholders(text);
      numbered.set(text, out);
    }
    return out;
  },
  lock: (strength) => ` FOR ${strength.toUpperCase()}`,
  jsonNumber: (column, field) => `(${column}->>'${field}')::numeric`,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
};

/**
 * `?` placeholders numbered `$1, $2, …` in order. A `?` inside a quoted string or identifier is left as it
 * is; the store's SQL uses no PostgreSQL operator spelled with `?` (the jsonb ones).
 */
export function numberPlaceholders(text: string): string {
  let n = 0;
  let quote: string | null = null;
  let out = '';
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      n += 1;
      out += `$${n}`;
    } else {
      out += ch;
    }
  }
  return out;
}

/** A placeholder for each value, comma-separated (for `IN (…)`); an empty list reads as `NULL` (matches none). */
export function marks(values: readonly unknown[]): string {
  return values.length ? values.map(() => '?').join(', ') : 'NULL';
}

/** A flag as a value both backends read in a condition (`CASE WHEN ? …`): PostgreSQL takes 1 and 0 as booleans too. */
export function flag(value: boolean): 0 | 1 {
  return value ? 1 : 0;
}
