import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  deliver,
  getPlan,
  PR_NUMBER,
  plannedPlan,
  prPayload,
  runUntil,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

let w: TriggerWorld;

beforeEach(async () => {
  w = await triggerWorld();
  await w.trigger({
    name: 'review',
    events: ['pull_request.opened', 'pull_request.synchronize'],
    prompt: 'Review {{repository}}#{{number}} at {{head_sha}}.',
  });
});
afterEach(async () => {
  await w.close();
});

async function openPr(number: number, sha: string): Promise<any> {
  const p = prPayload('opened', { sha });
  p.number = number;
  p.pull_request.number = number;
  const r = await deliver(w.d, 'pull_request', p);
  expect(r.status).toBe(202);
  expect(r.body.run_ids).toHaveLength(1);
  return plannedPlan(w.d, r.body.run_ids[0]);
}

describe('a new push to a pull request supersedes its pending plans', () => {
  it('synchronize supersedes the pending plan and plans the new head; closed supersedes that one', async () => {
    const first = await openPr(PR_NUMBER, w.repo.base);
    const other = await openPr(9, w.repo.base);
    expect(first.status).toBe('pending_approval');

    const head2 = w.repo.pushBranch('changes', { 'feature.txt': 'second push\n' });
    const sync = await deliver(w.d, 'pull_request', prPayload('synchronize', { sha: head2 }));
    expect(sync.status).toBe(202);
    expect(sync.body.detail).toContain(`superseded ${first.id}`);
    const superseded = await getPlan(w.d, first.id);
    expect(superseded.status).toBe('superseded');
    expect(superseded.decided_at).not.toBeNull();
    // A superseded plan can no longer be approved.
    const late = await w.d.api('POST', `/v1/plans/${first.id}/approve`, {});
    expect(late.status).toBe(409);

    // The new head gets its own plan.
    expect(sync.body.run_ids).toHaveLength(1);
    const second = await plannedPlan(w.d, sync.body.run_ids[0]);
    expect(second).toMatchObject({ status: 'pending_approval', workspace_commit: head2 });
    // Another pull request's plan is not touched.
    expect((await getPlan(w.d, other.id)).status).toBe('pending_approval');

    const closed = await deliver(w.d, 'pull_request', prPayload('closed', { sha: head2 }));
    expect(closed.status).toBe(202);
    expect(closed.body.run_ids).toEqual([]);
    expect(closed.body.detail).toContain(`superseded ${second.id}`);
    expect((await getPlan(w.d, second.id)).status).toBe('superseded');
    expect((await getPlan(w.d, other.id)).status).toBe('pending_approval');
    const pending = await w.d.api('GET', '/v1/plans?status=pending_approval');
    expect(pending.body.items.map((p: any) => p.id)).toEqual([other.id]);
  });

  it('synchronize cancels a plan run still exploring the old head', async () => {
    w.model.enqueue({ kind: 'hang' });
    const opened = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    const stale = opened.body.run_ids[0];
    await w.model.waitForRequests(1, 10_000);
    expect((await runUntil(w.d, stale, ['running'])).status).toBe('running');

    const head2 = w.repo.pushBranch('changes', { 'feature.txt': 'second push\n' });
    const sync = await deliver(w.d, 'pull_request', prPayload('synchronize', { sha: head2 }));
    expect(sync.status).toBe(202);
    expect((await runUntil(w.d, stale, ['canceled', 'failed', 'planned'])).status).toBe('canceled');
    const plan = await plannedPlan(w.d, sync.body.run_ids[0]);
    expect(plan.workspace_commit).toBe(head2);
    // The canceled run proposed nothing.
    const pending = await w.d.api('GET', '/v1/plans?status=pending_approval');
    expect(pending.body.items.map((p: any) => p.id)).toEqual([plan.id]);
  });
});
