import { afterEach, beforeEach, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import {
  commentPayload,
  deliver,
  getPlan,
  plannedPlan,
  prPayload,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

let w: TriggerWorld;
beforeEach(async () => {
  // carol is mapped but only ever got a viewer token (and no approver one).
  w = await triggerWorld({ users: { Codertocat: 'alice', 'octo-reviewer': 'bob' } });
  await w.d.daemon.store.createToken(issueToken('carol', 'carol', 'viewer', Date.now()).record);
  await w.trigger({
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}}.',
  });
});
afterEach(async () => w.close());

it('a mapped GitHub user decides only with the roles of their drydock identity', async () => {
  // Re-map octo-reviewer to carol, the viewer, for this delivery's config.
  w.d.config.github.users['octo-reviewer'] = 'carol';
  const opened = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
  const plan = await plannedPlan(w.d, opened.body.run_ids[0]);
  const r = await deliver(w.d, 'issue_comment', commentPayload('/drydock approve', 'octo-reviewer'));
  expect(r.body.outcome).toBe('rejected');
  expect(r.body.detail).toBe('carol holds no token that may decide plans (approver, operator or admin)');
  expect((await getPlan(w.d, plan.id)).status).toBe('pending_approval');
});
