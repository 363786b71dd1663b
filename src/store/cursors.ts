/**
 * The cursors of the reactions (src/reactions/): per reaction name, the rowid of the last event of the run
 * event log it is done with, and who holds it for a pass. A hold is a lease: of several daemons on one
 * database only the holder reads on and moves the cursor; a holder that died is taken over once its hold
 * lapses. The cursor only ever moves forward.
 */
export interface ReactionCursorStore {
  /** The reaction's cursor, null before it ever started. */
  reactionCursor(name: string): Promise<number | null>;
  /** Stores `at` as the reaction's cursor unless it has one already; returns the stored cursor. */
  placeReactionCursor(name: string, at: number, now: number): Promise<number>;
  /**
   * Holds the reaction for `holder` until `until` when nobody holds it, the hold lapsed (at `now`), or
   * `holder` holds it already; the cursor when it is held now, null when another holder has it.
   */
  holdReaction(name: string, holder: string, now: number, until: number): Promise<number | null>;
  /**
   * Moves the cursor forward to `to` (never back) and extends the hold to `until`, if `holder` still holds
   * the reaction; whether it does.
   */
  advanceReaction(name: string, holder: string, to: number, until: number, now: number): Promise<boolean>;
  /** Lets go of the hold, if `holder` has it (a stopping daemon: another may take over at once). */
  releaseReaction(name: string, holder: string): Promise<void>;
}
