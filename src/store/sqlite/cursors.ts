import type { ReactionCursorStore } from '../cursors.js';
import * as sql from '../sql/cursors.js';
import { SQLITE } from '../sql/dialect.js';
import type { SqliteDb } from './db.js';

/** The reactions' cursors (migrations/000020_reaction_cursors.sql). */
export class SqliteReactionCursors implements ReactionCursorStore {
  constructor(private readonly db: SqliteDb) {}

  async reactionCursor(name: string): Promise<number | null> {
    const value = this.db.pluck(sql.SELECT_CURSOR).get(name) as number | undefined;
    return value ?? null;
  }

  async placeReactionCursor(name: string, at: number, now: number): Promise<number> {
    return this.db.write(() => {
      this.db.sql(sql.PLACE_CURSOR).run(name, at, now);
      return this.db.pluck(sql.SELECT_CURSOR).get(name) as number;
    });
  }

  async holdReaction(name: string, holder: string, now: number, until: number): Promise<number | null> {
    const { text, values } = sql.holdStatement(name, holder, now, until);
    const cursor = this.db.pluck(text).get(...values) as number | undefined;
    return cursor ?? null;
  }

  async advanceReaction(
    name: string,
    holder: string,
    to: number,
    until: number,
    now: number,
  ): Promise<boolean> {
    const { text, values } = sql.advanceStatement(SQLITE, { name, holder, to, until, now });
    return this.db.sql(text).run(...values).changes === 1;
  }

  async releaseReaction(name: string, holder: string): Promise<void> {
    this.db.sql(sql.RELEASE).run(name, holder);
  }
}
