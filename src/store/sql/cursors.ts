import type { Dialect, Statement } from './dialect.js';

// The SQL of the reactions' cursors (src/store/cursors.ts) that both backends run as written here (`?`
// placeholders, see dialect.ts).

/** A reaction's cursor. Values: name. */
export const SELECT_CURSOR = 'SELECT cursor FROM reaction_cursors WHERE name = ?';

/** Places a reaction's cursor unless it has one. Values: name, cursor, now. */
export const PLACE_CURSOR = `INSERT INTO reaction_cursors (name, cursor, updated_at) VALUES (?, ?, ?)
  ON CONFLICT (name) DO NOTHING`;

/**
 * Holds a reaction for `holder` when nobody holds it, it holds it already, or the hold lapsed; answers the
 * cursor when it does. One statement: on PostgreSQL the row lock serializes two replicas' holds on a free row,
 * and the second re-checks the condition against the first one's hold.
 */
export function holdStatement(name: string, holder: string, now: number, until: number): Statement {
  return {
    text: `UPDATE reaction_cursors SET holder = ?, held_until = ?
           WHERE name = ? AND (holder IS NULL OR holder = ? OR held_until <= ?)
           RETURNING cursor`,
    values: [holder, until, name, holder, now],
  };
}

/** Moves the cursor forward (never back) and extends the hold, if `holder` still holds the reaction. */
export function advanceStatement(
  d: Dialect,
  a: { name: string; holder: string; to: number; until: number; now: number },
): Statement {
  return {
    text: `UPDATE reaction_cursors SET cursor = ${d.greatest('cursor', '?')}, held_until = ?, updated_at = ?
           WHERE name = ? AND holder = ?`,
    values: [a.to, a.until, a.now, a.name, a.holder],
  };
}

/** Lets go of the hold, if `holder` has it. Values: name, holder. */
export const RELEASE =
  'UPDATE reaction_cursors SET holder = NULL, held_until = NULL WHERE name = ? AND holder = ?';
