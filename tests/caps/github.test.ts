import { afterEach, expect, it } from 'vitest';
import { deliver, prPayload, type TriggerWorld, triggerWorld } from '../triggers/helpers.js';

// A GitHub delivery a spend cap stops, through the real daemon: a signed webhook, the inbox, the trigger.

let w: TriggerWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

it("a pull request past its trigger's daily_runs is recorded capped, naming the spend cap; the trigger records it too", async () => {
  w = await triggerWorld();
  const t = await w.trigger({
    name: 'review',
    events: ['pull_request.opened', 'pull_request.synchronize'],
    prompt: 'Review {{repository}}#{{number}}.',
    limits: { daily_runs: 1 },
  });
  const first = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
  expect(first.body).toMatchObject({ outcome: 'accepted' });
  expect(first.body.run_ids).toHaveLength(1);

  const second = await deliver(w.d, 'pull_request', prPayload('synchronize', { sha: w.repo.base }));
  expect(second.body).toMatchObject({ outcome: 'capped', run_ids: [] });
  expect(second.body.detail).toMatch(
    /^review: spend cap reached: trigger trg_\S+'s daily daily_runs \(1 of 1 runs\)/,
  );
  const fires = await w.d.api('GET', `/v1/triggers/${t.id}/deliveries`);
  expect(fires.body.items.map((f: any) => f.outcome)).toEqual(['capped', 'accepted']);
});
