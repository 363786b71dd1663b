import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { Plan } from '../../src/domain/types.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => h.close());

async function seedPlan(store: SqliteStore, id: string, sessionId: string): Promise<Plan> {
  await store.createRun({
    id: `run_${id}`,
    sessionId,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'p',
    requestedBy: 'operator-user',
    createdAt: h.clock.now(),
  });
  return store.createPlan({
    id,
    runId: `run_${id}`,
    sessionId,
    conversationId: `run_${id}`,
    toolUseId: 't',
    markdown: `# Plan ${id}\n\nbody`,
    sha256: 'a'.repeat(64),
    workspaceCommit: null,
    status: 'pending_approval',
    round: 1,
    previousPlanId: null,
    requestedBy: 'operator-user',
    createdAt: h.clock.now(),
    jobId: null,
    triggerId: null,
    source: 'manual',
    expiresAt: h.clock.now() + 60_000,
    approvalsRequired: 1,
    allowSelfApproval: false,
    executeMode: 'manual',
    network: [],
    owner: 'operator-user',
    decidedAt: null,
    failureReason: null,
    subject: null,
  });
}

const pending = async () =>
  (await h.call('GET', '/v1/plans?status=pending_approval', { role: 'viewer' })).body.items.map(
    (p: any) => p.id,
  );

it('the cached queue page never outlives a change, from this process or another on the same file', async () => {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  await seedPlan(h.store, 'pln_a', s.body.id);
  expect(await pending()).toEqual(['pln_a']);
  expect(await pending()).toEqual(['pln_a']); // served from the cache

  // A decision through the API: gone from the pending page at once.
  await h.call('POST', '/v1/plans/pln_a/reject', { role: 'approver', body: { comment: 'no' } });
  expect(await pending()).toEqual([]);

  // A plan written by another connection (a second daemon on the same database file).
  const other = new SqliteStore({ file: join(h.config.data_dir, 'drydock.db') });
  try {
    await seedPlan(other, 'pln_b', s.body.id);
    expect(await pending()).toEqual(['pln_b']);
  } finally {
    await other.close();
  }

  // Expiry needs no write: a page is kept for at most a second, and expired plans are filtered by time.
  h.clock.advance(61_000);
  expect(await pending()).toEqual([]);
});

it('requests that miss the cache together wait for one build of the page, and a change after it builds anew', async () => {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  await seedPlan(h.store, 'pln_c', s.body.id);
  const listPlans = vi.spyOn(h.store, 'listPlans');
  const answers = await Promise.all(Array.from({ length: 8 }, () => pending()));
  expect(answers).toEqual(Array.from({ length: 8 }, () => ['pln_c']));
  expect(listPlans).toHaveBeenCalledTimes(1);

  await seedPlan(h.store, 'pln_d', s.body.id);
  const after = await Promise.all(Array.from({ length: 4 }, () => pending()));
  expect(after).toEqual(Array.from({ length: 4 }, () => ['pln_c', 'pln_d']));
  expect(listPlans).toHaveBeenCalledTimes(2);
});
