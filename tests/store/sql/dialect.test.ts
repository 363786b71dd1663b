import { describe, expect, it } from 'vitest';
import { marks, numberPlaceholders, POSTGRES, SQLITE } from '../../../src/store/sql/dialect.js';

// The shared SQL is written with `?` placeholders; PostgreSQL gets them numbered. What the statements do is
// the contract suite's (tests/store/contract), run on both backends; this holds the translation itself.

describe('numberPlaceholders', () => {
  it('numbers each placeholder in order', () => {
    expect(numberPlaceholders('UPDATE runs SET a = ?, b = ? WHERE id = ? AND s IN (?, ?)')).toBe(
      'UPDATE runs SET a = $1, b = $2 WHERE id = $3 AND s IN ($4, $5)',
    );
  });

  it('leaves a ? inside a quoted string or identifier as it is', () => {
    expect(numberPlaceholders(`SELECT '?' AS q, "a?b", x FROM t WHERE y = ? AND z = 'it''s ?'`)).toBe(
      `SELECT '?' AS q, "a?b", x FROM t WHERE y = $1 AND z = 'it''s ?'`,
    );
  });

  it('leaves a text without placeholders unchanged, so $n texts pass through', () => {
    const text = 'SELECT * FROM runs WHERE id = $1';
    expect(numberPlaceholders(text)).toBe(text);
  });
});

describe('dialects', () => {
  it('SQLite runs the text as written; PostgreSQL numbered, the same text each time', () => {
    const text = 'SELECT 1 FROM runs WHERE id = ? AND claim_epoch = ?';
    expect(SQLITE.sql(text)).toBe(text);
    expect(POSTGRES.sql(text)).toBe('SELECT 1 FROM runs WHERE id = $1 AND claim_epoch = $2');
    expect(POSTGRES.sql(text)).toBe(POSTGRES.sql(text));
  });

  it('spells row locks on PostgreSQL only', () => {
    expect(SQLITE.lock('share')).toBe('');
    expect(POSTGRES.lock('share')).toBe(' FOR SHARE');
    expect(POSTGRES.lock('no key update')).toBe(' FOR NO KEY UPDATE');
  });

  it('writes a placeholder per value, and an empty list as one that matches nothing', () => {
    expect(marks(['a', 'b', 'c'])).toBe('?, ?, ?');
    expect(marks([])).toBe('NULL');
  });
});
