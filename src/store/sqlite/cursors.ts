import type { ReactionCursorStore } from '../cursors.js';
import type { SqliteDb } from './db.js';

/** The reactions' cursors (migrations/000020_reaction_cursors.sql). */
export class SqliteReactionCursors implements ReactionCursorStore {
  constructor(private readonly db: SqliteDb) {}

  async reactionCursor(name: string): Promise<number | null> {
    const value = this.db.pluck('SELECT cursor FROM reaction_cursors WHERE name = ?').get(name) as
      | number
      | undefined;
    return value ?? null;
  }

  async placeReactionCursor(name: string, at: number, now: number): Promise<number> {
    return this.db.write(() => {
      this.db
        .sql(
          `INSERT INTO reaction_cursors (name, cursor, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (name) DO NOTHING`,
        )
        .run(name, at, now);
      return this.db.pluck('SELECT cursor FROM reaction_cursors WHERE name = ?').get(name) as number;
    });
  }

  async holdReaction(name: string, holder: string, now: number, until: number): Promise<number | null> {
    const cursor = this.db
      .pluck(
        `UPDATE reaction_cursors SET holder = ?, held_until = ?
         WHERE name = ? AND (holder IS NULL OR holder = ? OR held_until <= ?)
         RETURNING cursor`,
      )
      .get(holder, until, name, holder, now) as number | undefined;
    return cursor ?? null;
  }

  async advanceReaction(
    name: string,
    holder: string,
    to: number,
    until: number,
    now: number,
  ): Promise<boolean> {
    return (
      this.db
        .sql(
          `UPDATE reaction_cursors SET cursor = MAX(cursor, ?), held_until = ?, updated_at = ?
           WHERE name = ? AND holder = ?`,
        )
        .run(to, until, now, name, holder).changes === 1
    );
  }

  async releaseReaction(name: string, holder: string): Promise<void> {
    this.db
      .sql('UPDATE reaction_cursors SET holder = NULL, held_until = NULL WHERE name = ? AND holder = ?')
      .run(name, holder);
  }
}
