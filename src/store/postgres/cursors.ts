import type { ReactionCursorStore } from '../cursors.js';
import * as sql from '../sql/cursors.js';
import { POSTGRES } from '../sql/dialect.js';
import type { PgDb } from './db.js';

/** The reactions' cursors (migrations/postgres/000010_reaction_cursors.sql). */
export class PgReactionCursors implements ReactionCursorStore {
  constructor(private readonly db: PgDb) {}

  async reactionCursor(name: string): Promise<number | null> {
    const value = await this.db.value<string>(sql.SELECT_CURSOR, [name]);
    return value === undefined ? null : Number(value);
  }

  async placeReactionCursor(name: string, at: number, now: number): Promise<number> {
    await this.db.exec(sql.PLACE_CURSOR, [name, at, now]);
    return Number(await this.db.value<string>(sql.SELECT_CURSOR, [name]));
  }

  async holdReaction(name: string, holder: string, now: number, until: number): Promise<number | null> {
    const { text, values } = sql.holdStatement(name, holder, now, until);
    const value = await this.db.value<string>(text, values);
    return value === undefined ? null : Number(value);
  }

  async advanceReaction(
    name: string,
    holder: string,
    to: number,
    until: number,
    now: number,
  ): Promise<boolean> {
    const { text, values } = sql.advanceStatement(POSTGRES, { name, holder, to, until, now });
    return (await this.db.exec(text, values)) === 1;
  }

  async releaseReaction(name: string, holder: string): Promise<void> {
    await this.db.exec(sql.RELEASE, [name, holder]);
  }
}
