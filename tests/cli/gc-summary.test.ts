import { describe, expect, it } from 'vitest';
import { gcItemLines, gcSummary } from '../../src/cli/commands/gc.js';
import type { RetentionReport } from '../../src/workspace/retention.js';

// `drydock gc`'s last line counts in words: singular and plural, a dry run's "would remove" and a real run's
// "removed". (tests/workspace/retention.test.ts runs the command itself.)

const KEPT = '(in use, or settled less than retention.worktree_ttl_ms ago)';
const report = (over: Partial<RetentionReport>): RetentionReport => ({
  worktrees: [],
  checkouts: [],
  kept: 0,
  failed: [],
  ...over,
});

describe('gc summary', () => {
  it('says "nothing" when nothing is due, for a dry run and a real one', () => {
    expect(gcSummary(report({ kept: 3 }), true)).toBe(`nothing to remove; 3 kept ${KEPT}`);
    expect(gcSummary(report({ kept: 0 }), false)).toBe(`nothing removed; 0 kept ${KEPT}`);
  });

  it('counts one and many in words, "would remove" before and "removed" after', () => {
    const two = report({ worktrees: ['plan_a', 'plan_b'], checkouts: ['run_c'], kept: 1 });
    expect(gcSummary(two, true)).toBe(`would remove 2 worktrees and 1 pull request checkout; 1 kept ${KEPT}`);
    expect(gcSummary(two, false)).toBe(`removed 2 worktrees and 1 pull request checkout; 1 kept ${KEPT}`);
    const checkouts = report({ checkouts: ['run_a', 'run_b'] });
    expect(gcSummary(checkouts, false)).toBe(
      `removed no worktrees and 2 pull request checkouts; 0 kept ${KEPT}`,
    );
    expect(gcItemLines(two, true)).toEqual([
      'would remove worktree and branch drydock/plan_a',
      'would remove worktree and branch drydock/plan_b',
      'would remove pull request checkout run_c',
    ]);
    expect(gcItemLines(two, false)[0]).toBe('removed worktree and branch drydock/plan_a');
  });

  it('counts what could not be removed', () => {
    const failed = report({ worktrees: ['plan_a'], failed: [{ path: '/w/plan_b', error: 'EBUSY' }] });
    expect(gcSummary(failed, false)).toBe(
      `removed 1 worktree and no pull request checkouts; 0 kept ${KEPT}; 1 could not be removed (see above)`,
    );
  });
});
