import type { ReactionCursorStore } from '../cursors.js';
import type { PgDb } from './db.js';

/** The reactions' cursors (migrations/postgres/000010_reaction_cursors.sql). */
export class PgReactionCursors implements ReactionCursorStore {
  constructor(private readonly db: PgDb) {}

  async reactionCursor(name: string): Promise<number | null> {
    const value = await this.db.value<string>('SELECT cursor FROM reaction_cursors WHERE name = $1', [name]);
    return value === undefined ? null : Number(value);
  }

  async placeReactionCursor(name: string, at: number, now: number): Promise<number> {
    await this.db.exec(
      `INSERT INTO reaction_cursors (name, cursor, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO NOTHING`,
      [name, at, now],
    );
    return Number(await this.db.value<string>('SELECT cursor FROM reaction_cursors WHERE name = $1', [name]));
  }

  async holdReaction(name: string, holder: string, now: number, until: number): Promise<number | null> {
    // One statement: the row lock makes two replicas' holds on a free row serialize, and the second one
    // re-checks the condition against the first one's hold.
    const value = await this.db.value<string>(
      `UPDATE reaction_cursors SET holder = $2, held_until = $3
       WHERE name = $1 AND (holder IS NULL OR holder = $2 OR held_until <= $4)
       RETURNING cursor`,
      [name, holder, until, now],
    );
    return value === undefined ? null : Number(value);
  }

  async advanceReaction(
    name: string,
    holder: string,
    to: number,
    until: number,
    now: number,
  ): Promise<boolean> {
    return (
      (await this.db.exec(
        `UPDATE reaction_cursors SET cursor = GREATEST(cursor, $3), held_until = $4, updated_at = $5
         WHERE name = $1 AND holder = $2`,
        [name, holder, to, until, now],
      )) === 1
    );
  }

  async releaseReaction(name: string, holder: string): Promise<void> {
    await this.db.exec(
      'UPDATE reaction_cursors SET holder = NULL, held_until = NULL WHERE name = $1 AND holder = $2',
      [name, holder],
    );
  }
}
