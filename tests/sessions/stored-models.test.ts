import { afterEach, describe, expect, it } from 'vitest';
import { storedModelWarnings } from '../../src/sessions/stored-models.js';
import { createHarness, type Harness } from '../support/harness.js';

// What a start says of stored work on a model that retires: each open session, active job and enabled
// trigger naming it, with the replacement. Nothing for work on models that are far from retiring.

let h: Harness;
afterEach(async () => {
  await h.close();
});

describe('stored sessions, jobs and triggers on a retiring model', () => {
  it('are each named at start, retiring and then retired', async () => {
    h = await createHarness({ now: Date.parse('2026-11-20T12:00:00Z') });
    const session = await h.call('POST', '/v1/sessions', {
      body: { name: 'old-sonnet', workspace: h.workspace, defaults: { model: 'claude-sonnet-4-5' } },
    });
    expect(session.status).toBe(201);
    const current = await h.call('POST', '/v1/sessions', {
      body: { name: 'current', workspace: h.workspace },
    });
    const job = await h.call('POST', `/v1/sessions/${current.body.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'work', options: { model: 'claude-sonnet-4-5' } },
    });
    expect(job.status).toBe(201);
    const trigger = await h.call('POST', '/v1/triggers', {
      role: 'admin',
      body: {
        kind: 'generic',
        name: 'deploys',
        prompt: 'Look.',
        workspace: h.workspace,
        options: { model: 'claude-sonnet-4-5' },
      },
    });
    expect(trigger.status).toBe(201);
    const closed = await h.call('POST', '/v1/sessions', {
      body: { name: 'closed', workspace: h.workspace, defaults: { model: 'claude-sonnet-4-5' } },
    });
    expect((await h.call('DELETE', `/v1/sessions/${closed.body.id}`)).status).toBeLessThan(300);

    const retiring =
      'claude-sonnet-4-5 retires on 2026-11-30 (in 10 days); move to claude-sonnet-5-5 before then';
    // Sessions come in the store's order (same creation time here): compare as a set.
    const lines = await storedModelWarnings(h.store, h.config, h.clock.now());
    expect([...lines].sort()).toEqual([
      `job ${job.body.id} of session current: ${retiring}`,
      `session old-sonnet (${session.body.id}): ${retiring}`,
      `trigger deploys (${trigger.body.id}): ${retiring}`,
    ]);

    h.clock.set(Date.parse('2026-11-30T00:00:00Z'));
    const retired = await storedModelWarnings(h.store, h.config, h.clock.now());
    expect(retired).toHaveLength(3);
    expect(retired).toContain(
      `session old-sonnet (${session.body.id}): claude-sonnet-4-5 retired on 2026-11-30 and no longer answers; use claude-sonnet-5-5 (docs/models.md)`,
    );
  });

  it('say nothing of work on models that still answer for long', async () => {
    h = await createHarness({ now: Date.parse('2026-12-04T12:00:00Z') });
    await h.call('POST', '/v1/sessions', {
      body: { workspace: h.workspace, defaults: { model: 'claude-opus-4-5' } },
    });
    await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    expect(await storedModelWarnings(h.store, h.config, h.clock.now())).toEqual([]);
  });
});
