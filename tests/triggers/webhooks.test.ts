import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  allRuns,
  deliver,
  example,
  getRun,
  PLAN_MD,
  PR_NUMBER,
  prPayload,
  REPO,
  runUntil,
  settled,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

let w: TriggerWorld;

beforeEach(async () => {
  w = await triggerWorld();
});
afterEach(async () => {
  await w.close();
});

/** The trigger a run came from: every trigger here names itself in its prompt. */
const triggerOf = (run: any) => /^\[trigger (\S+)\]/.exec(run.prompt)?.[1];
const prompt = 'Review {{repository}}#{{number}} at {{head_sha}} ({{event}}, by {{author}}).';

async function deliveriesOf(triggerId: string): Promise<any[]> {
  const r = await w.d.api('GET', `/v1/triggers/${triggerId}/deliveries`);
  expect(r.status).toBe(200);
  return r.body.items;
}

describe('POST /webhooks/github with real payloads', () => {
  it('answers ping with pong and records push as ignored', async () => {
    const ping = await deliver(w.d, 'ping', example('ping'));
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ pong: true });
    expect(ping.body.delivery_id).toMatch(/^dlv_/);

    const push = await deliver(w.d, 'push', example('push'));
    expect(push.status).toBe(202);
    expect(push.body).toMatchObject({ outcome: 'ignored', run_ids: [] });
    expect(push.body.detail).toContain('push');
    // Recorded: a redelivery of the same id is recognised, with the recorded outcome.
    const again = await deliver(w.d, 'push', example('push'), { delivery: push.delivery });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      duplicate: true,
      delivery_id: push.body.delivery_id,
      outcome: 'ignored',
      run_ids: [],
    });
    const stored = await w.d.daemon.store.getWebhookDelivery(push.body.delivery_id);
    expect(stored).toMatchObject({ source: 'github', event: 'push', outcome: 'ignored', key: push.delivery });
    expect(await allRuns(w.d)).toEqual([]);
  });

  it('fires exactly the triggers whose events and filters match', async () => {
    const t = async (name: string, events: string[], filters: Record<string, unknown> = {}) =>
      w.trigger({ name, events, filters, prompt: `[trigger ${name}] ${prompt}` });
    const triggers = {
      any: await t('any', ['pull_request']),
      opened: await t('opened', ['pull_request.opened']),
      repoOk: await t('repo-ok', ['pull_request.opened'], { repositories: ['codertocat/hello-world'] }),
      repoOther: await t('repo-other', ['pull_request.opened'], { repositories: ['octo/other'] }),
      baseMaster: await t('base-master', ['pull_request.opened'], { base_branches: ['master'] }),
      baseMain: await t('base-main', ['pull_request.opened'], { base_branches: ['main'] }),
      labelBug: await t('label-bug', ['pull_request.opened'], { labels: ['bug', 'security'] }),
      authorCoder: await t('author-coder', ['pull_request.opened'], { authors: ['codertocat'] }),
      authorOther: await t('author-other', ['pull_request.opened'], { authors: ['someone-else'] }),
      draftOnly: await t('draft-only', ['pull_request.opened'], { draft: true }),
      readyOnly: await t('ready-only', ['pull_request.opened'], { draft: false }),
      sync: await t('sync', ['pull_request.synchronize']),
      closed: await t('closed', ['pull_request.closed']),
    };
    const disabled = await t('disabled', ['pull_request']);
    expect((await w.d.api('PATCH', `/v1/triggers/${disabled.id}`, { enabled: false })).status).toBe(200);

    // opened: not a draft, no labels, by Codertocat, into master.
    const opened = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(opened.status).toBe(202);
    expect(opened.body.outcome).toBe('accepted');
    const openedRuns = await Promise.all(opened.body.run_ids.map((id: string) => getRun(w.d, id)));
    expect(openedRuns.map(triggerOf).sort()).toEqual(
      ['any', 'author-coder', 'base-master', 'opened', 'ready-only', 'repo-ok'].sort(),
    );
    for (const run of openedRuns) {
      expect(run).toMatchObject({ source: 'webhook', phase: 'plan' });
      expect(run.prompt).toContain(
        `Review ${REPO}#${PR_NUMBER} at ${w.repo.base} (pull_request.opened, by Codertocat)`,
      );
    }
    // Why the others did not fire is on the delivery.
    for (const [name, why] of [
      ['repo-other', 'repository Codertocat/Hello-World not in filter'],
      ['base-main', 'base branch master not in filter'],
      ['label-bug', 'no matching label'],
      ['author-other', 'author Codertocat not in filter'],
      ['draft-only', 'not a draft'],
      ['sync', 'event pull_request.opened not subscribed'],
      ['closed', 'event pull_request.opened not subscribed'],
    ]) {
      expect(opened.body.detail).toContain(`${name}: ${why}`);
    }
    expect(opened.body.detail).not.toContain('disabled');
    // Each trigger's own delivery list shows the delivery it was asked about; the disabled one saw nothing.
    for (const trig of Object.values(triggers)) {
      const items = await deliveriesOf(trig.id);
      expect(items.map((i) => i.id)).toEqual([opened.body.delivery_id]);
      expect(items[0]).toMatchObject({
        source: 'github',
        event: 'pull_request.opened',
        subject: `${REPO}#${PR_NUMBER}`,
      });
    }
    expect(await deliveriesOf(disabled.id)).toEqual([]);

    // A labelled draft pull request (another PR).
    const draft = prPayload('opened', { sha: w.repo.base });
    draft.pull_request.number = 7;
    draft.number = 7;
    draft.pull_request.draft = true;
    draft.pull_request.labels = [{ ...example('pull_request', 'labeled').label, name: 'security' }];
    const second = await deliver(w.d, 'pull_request', draft);
    expect(second.status).toBe(202);
    const secondRuns = await Promise.all(second.body.run_ids.map((id: string) => getRun(w.d, id)));
    expect(secondRuns.map(triggerOf).sort()).toEqual(
      ['any', 'author-coder', 'base-master', 'draft-only', 'label-bug', 'opened', 'repo-ok'].sort(),
    );
    expect(second.body.detail).toContain('ready-only: draft pull request');

    // synchronize and closed: only the triggers subscribed to them (and the catch-all).
    const sync = await deliver(w.d, 'pull_request', prPayload('synchronize', { sha: w.repo.base }));
    expect(sync.status).toBe(202);
    const syncRuns = await Promise.all(sync.body.run_ids.map((id: string) => getRun(w.d, id)));
    expect(syncRuns.map(triggerOf).sort()).toEqual(['any', 'sync']);
    const closed = await deliver(w.d, 'pull_request', prPayload('closed', { sha: w.repo.base }));
    expect(closed.status).toBe(202);
    const closedRuns = await Promise.all(closed.body.run_ids.map((id: string) => getRun(w.d, id)));
    expect(closedRuns.map(triggerOf).sort()).toEqual(['any', 'closed']);

    // GET /v1/runs holds exactly these runs, one per (trigger, delivery).
    const runs = await settled(w.d);
    const ids = [opened, second, sync, closed].flatMap((x) => x.body.run_ids);
    expect(runs.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    // (That these runs also plan side by side is concurrent-checkouts.test.ts's business; supersession is
    // supersede.test.ts's.)
  });

  it('a pull request of a repository without a configured clone is cloned on demand; a remote that cannot be reached fails the run, saying so', async () => {
    await w.trigger({ name: 'any', events: ['pull_request'], prompt });
    const p = prPayload('opened', { sha: w.repo.base });
    p.repository.full_name = 'octo/elsewhere';
    const r = await deliver(w.d, 'pull_request', p);
    expect(r.status).toBe(202);
    expect(r.body.outcome).toBe('accepted');
    expect(r.body.run_ids).toHaveLength(1);
    // The test configuration clones from a port that refuses connections (tests/support/harness.ts).
    const run = await runUntil(w.d, r.body.run_ids[0], ['failed', 'planned']);
    expect(run.status).toBe('failed');
    expect(run.error).toContain('cloning octo/elsewhere from http://127.0.0.1:9/octo/elsewhere.git failed');
    expect(w.model.requests).toEqual([]);
  });

  it('a redelivered X-GitHub-Delivery starts no new run and says duplicate: true', async () => {
    await w.trigger({ name: 'opened', events: ['pull_request.opened'], prompt });
    const payload = prPayload('opened', { sha: w.repo.base });
    const first = await deliver(w.d, 'pull_request', payload);
    expect(first.status).toBe(202);
    expect(first.body.run_ids).toHaveLength(1);

    const again = await deliver(w.d, 'pull_request', payload, { delivery: first.delivery });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      duplicate: true,
      delivery_id: first.body.delivery_id,
      outcome: 'accepted',
      detail: null,
      run_ids: first.body.run_ids,
    });

    // Concurrent redeliveries (GitHub retries while the first is still in flight): still one delivery.
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => deliver(w.d, 'pull_request', payload, { delivery: first.delivery })),
    );
    for (const b of burst) expect(b.body).toMatchObject({ duplicate: true, run_ids: first.body.run_ids });

    const racing = randomUUID();
    const raced = await Promise.all(
      Array.from({ length: 10 }, () => deliver(w.d, 'pull_request', payload, { delivery: racing })),
    );
    expect(raced.filter((r) => r.status === 202)).toHaveLength(1);
    expect(raced.filter((r) => r.status === 200 && r.body.duplicate === true)).toHaveLength(9);

    const runs = await settled(w.d);
    expect(runs).toHaveLength(2);
    expect(runs.map((r) => r.id)).toContain(first.body.run_ids[0]);
  });

  it('records capped once a trigger reached its hourly cap', async () => {
    const capped = await w.trigger({
      name: 'capped',
      events: ['pull_request.opened'],
      prompt,
      hourly_cap: 1,
    });
    const free = await w.trigger({ name: 'free', events: ['pull_request.opened'], prompt });
    expect(capped.hourly_cap).toBe(1);
    expect(free.hourly_cap).toBe(w.d.config.github.trigger_hourly_cap);

    const one = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(one.body).toMatchObject({ outcome: 'accepted' });
    expect(one.body.run_ids).toHaveLength(2);
    const two = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(two.status).toBe(202);
    // The other trigger still fires; the capped one is named.
    expect(two.body.run_ids).toHaveLength(1);
    expect(two.body.detail).toContain('capped: hourly cap of 1 reached');

    // With only the capped trigger left, the delivery's outcome is capped.
    expect((await w.d.api('PATCH', `/v1/triggers/${free.id}`, { enabled: false })).status).toBe(200);
    const three = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(three.status).toBe(202);
    expect(three.body).toMatchObject({ outcome: 'capped', run_ids: [] });
    const listed = await deliveriesOf(capped.id);
    expect(listed.find((x) => x.id === three.body.delivery_id)).toMatchObject({
      outcome: 'capped',
      run_id: null,
      delivery_outcome: 'capped',
    });
    expect((await settled(w.d)).length).toBe(3);
  });

  it('answers within a second while the runs it queued are still waiting for the model', async () => {
    // The model takes its time: the runs cannot have finished when the webhook is answered.
    w.model.setFallback({
      kind: 'message',
      content: [{ type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN_MD } }],
      delayMs: 1_500,
    });
    for (let i = 0; i < 6; i++) {
      await w.trigger({ name: `t${i}`, events: ['pull_request.opened'], prompt });
    }
    const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(r.status).toBe(202);
    expect(r.body.run_ids).toHaveLength(6);
    const states = await Promise.all(r.body.run_ids.map((id: string) => getRun(w.d, id)));
    for (const s of states) expect(['queued', 'running']).toContain(s.status);
    // ...and they do finish (whether each planned is concurrent-checkouts.test.ts's business).
    const runs = await settled(w.d);
    expect(runs.map((x) => x.id).sort()).toEqual([...r.body.run_ids].sort());
  });
});

describe('a delivery whose processing fails', () => {
  it('is tried again when the failure passes (a busy database), and starts its run once', async () => {
    await w.trigger({ name: 'opened', events: ['pull_request.opened'], prompt });
    const store = w.d.daemon.store;
    const original = store.fireTrigger.bind(store);
    let calls = 0;
    store.fireTrigger = async (input) => {
      calls += 1;
      if (calls === 1) throw new Error('database is locked (injected)');
      return original(input);
    };
    const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(r.body.outcome, r.body.detail).toBe('accepted');
    expect(r.body.run_ids).toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('is marked failed when it keeps failing, and is not swallowed as a duplicate when GitHub redelivers it', async () => {
    await w.trigger({ name: 'opened', events: ['pull_request.opened'], prompt });
    // The store fails while the delivery is being routed (a full disk), on every attempt.
    const store = w.d.daemon.store;
    const original = store.fireTrigger.bind(store);
    let failures = 3;
    store.fireTrigger = async (input) => {
      if (failures-- > 0) throw new Error('disk I/O error (injected)');
      return original(input);
    };
    const payload = prPayload('opened', { sha: w.repo.base });
    const first = await deliver(w.d, 'pull_request', payload);
    expect(failures).toBe(0);
    // Answered (it was recorded); the inbox then failed it, keeping its body.
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      outcome: 'failed',
      detail: 'processing failed: disk I/O error (injected)',
    });
    const db = (store as any).db;
    expect(
      db.prepare('SELECT payload FROM deliveries WHERE id = ?').pluck().get(first.body.delivery_id),
    ).toBeTypeOf('string');

    // GitHub shows the failure and offers "Redeliver" (same X-GitHub-Delivery): it must be processed now.
    const redelivered = await deliver(w.d, 'pull_request', payload, { delivery: first.delivery });
    expect(redelivered.body.duplicate ?? false, JSON.stringify(redelivered.body)).toBe(false);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body.delivery_id).toBe(first.body.delivery_id);
    expect(redelivered.body.outcome).toBe('accepted');
    expect(redelivered.body.run_ids).toHaveLength(1);
    expect((await w.d.api('GET', '/healthz')).status).toBe(200);
  });
});
