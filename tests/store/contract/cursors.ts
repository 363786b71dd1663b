import { describe, expect, it } from 'vitest';
import { type StoreFactory, T0, useStore } from './fixtures.js';

// ReactionCursorStore: the reactions' durable cursors (src/reactions/): placed once, held by one replica at a
// time (a lease that lapses), moved only forward and only by the holder.

export function cursorContract(factory: StoreFactory): void {
  describe('reaction cursors', () => {
    const ctx = useStore(factory);

    it('is null until placed; a second placing keeps the first cursor', async () => {
      const { store } = ctx;
      expect(await store.reactionCursor('github_report')).toBeNull();
      expect(await store.placeReactionCursor('github_report', 7, T0)).toBe(7);
      expect(await store.placeReactionCursor('github_report', 99, T0)).toBe(7);
      expect(await store.reactionCursor('github_report')).toBe(7);
      expect(await store.reactionCursor('plan_settling')).toBeNull();
    });

    it('one holder at a time: another takes over once the hold lapses, or at once after a release', async () => {
      const { store } = ctx;
      const peer = await ctx.peer();
      await store.placeReactionCursor('r', 0, T0);
      expect(await store.holdReaction('r', 'a', T0, T0 + 1_000)).toBe(0);
      expect(await peer.holdReaction('r', 'b', T0 + 999, T0 + 2_000)).toBeNull();
      // The holder holds it again (a restart under the same replica name goes on at once).
      expect(await store.holdReaction('r', 'a', T0 + 10, T0 + 1_500)).toBe(0);
      expect(await peer.holdReaction('r', 'b', T0 + 1_500, T0 + 3_000)).toBe(0);
      expect(await store.holdReaction('r', 'a', T0 + 1_600, T0 + 4_000)).toBeNull();
      await store.releaseReaction('r', 'a'); // not a's: changes nothing
      expect(await store.holdReaction('r', 'a', T0 + 1_700, T0 + 4_000)).toBeNull();
      await peer.releaseReaction('r', 'b');
      expect(await store.holdReaction('r', 'a', T0 + 1_800, T0 + 4_000)).toBe(0);
      expect(await store.holdReaction('missing', 'a', T0, T0 + 1_000)).toBeNull();
    });

    it('only the holder moves the cursor, only forward, and each move extends the hold', async () => {
      const { store } = ctx;
      const peer = await ctx.peer();
      await store.placeReactionCursor('r', 5, T0);
      expect(await store.advanceReaction('r', 'a', 9, T0 + 1_000, T0)).toBe(false); // not held
      expect(await store.holdReaction('r', 'a', T0, T0 + 1_000)).toBe(5);
      expect(await store.advanceReaction('r', 'a', 9, T0 + 5_000, T0 + 10)).toBe(true);
      expect(await store.reactionCursor('r')).toBe(9);
      expect(await peer.advanceReaction('r', 'b', 20, T0 + 5_000, T0 + 10)).toBe(false);
      expect(await store.advanceReaction('r', 'a', 3, T0 + 5_000, T0 + 20)).toBe(true);
      expect(await store.reactionCursor('r')).toBe(9);
      // Extended to T0 + 5,000: b cannot take it at T0 + 2,000.
      expect(await peer.holdReaction('r', 'b', T0 + 2_000, T0 + 9_000)).toBeNull();
      expect(await peer.holdReaction('r', 'b', T0 + 5_000, T0 + 9_000)).toBe(9);
    });

    it('two replicas holding a free cursor at once: exactly one gets it', async () => {
      const { store } = ctx;
      const peer = await ctx.peer();
      await store.placeReactionCursor('r', 0, T0);
      const got = await Promise.all([
        store.holdReaction('r', 'a', T0, T0 + 1_000),
        peer.holdReaction('r', 'b', T0, T0 + 1_000),
      ]);
      expect(got.filter((c) => c !== null)).toEqual([0]);
    });
  });
}
