import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliver, prPayload, runUntil, type TriggerWorld, triggerWorld } from './helpers.js';

let w: TriggerWorld;

beforeEach(async () => {
  w = await triggerWorld({ patch: (c) => (c.runs.max_concurrent = 10) });
});
afterEach(async () => {
  await w.close();
});

describe('pull request checkouts of one clone, side by side', () => {
  it('every run gets its worktree when many plan runs start on the same clone at once', async () => {
    for (let i = 0; i < 10; i++) {
      await w.trigger({ name: `team-${i}`, events: ['pull_request.opened'], prompt: 'Review {{number}}.' });
    }
    const failed: string[] = [];
    for (const number of [21, 22, 23, 24, 25]) {
      const head = w.repo.pushBranch(`pr-${number}`, { [`pr-${number}.txt`]: `${number}\n` });
      const p = prPayload('opened', { sha: head, ref: `pr-${number}` });
      p.number = number;
      p.pull_request.number = number;
      const r = await deliver(w.d, 'pull_request', p);
      expect(r.body.run_ids).toHaveLength(10);
      for (const id of r.body.run_ids) {
        const run = await runUntil(w.d, id, ['planned', 'failed', 'canceled']);
        if (run.status !== 'planned') failed.push(`#${number} ${id}: ${run.error}`);
      }
    }
    expect(failed).toEqual([]);
  });
});
