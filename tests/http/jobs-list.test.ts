import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, T0 } from '../support/harness.js';
import { createJob, createSession, DAY, expectError, iso } from './helpers.js';

// GET /v1/jobs: every session's jobs and every scheduled trigger's job in one list, with its filters, pages,
// checks of its query, and who sees what.

describe('GET /v1/jobs', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const list = async (query = '', role: 'admin' | 'operator' | 'approver' | 'viewer' = 'operator') => {
    const res = await h.call('GET', `/v1/jobs${query}`, { role });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { items: { id: string; session_id: string }[]; next_cursor: string | null };
  };
  const ids = async (query = '') => (await list(query)).items.map((j) => j.id);

  /** The operator's session with two jobs (one paused), the admin's with one, and a scheduled trigger. */
  async function given() {
    const mine = (await createSession(h)).id as string;
    const a = await createJob(h, mine, { cron: '0 9 * * *', timezone: 'UTC' });
    h.clock.advance(1000);
    const b = await createJob(h, mine, { cron: '0 10 * * *', timezone: 'UTC', recurring: false });
    expect((await h.call('POST', `/v1/jobs/${b.id}/pause`)).status).toBe(200);
    h.clock.advance(1000);
    const theirs = (await h.call('POST', '/v1/sessions', { role: 'admin', body: { workspace: h.workspace } }))
      .body.id as string;
    const c = (
      await h.call('POST', `/v1/sessions/${theirs}/jobs`, {
        role: 'admin',
        body: { cron: '0 11 * * *', timezone: 'UTC', prompt: 'the admin’s job' },
      })
    ).body;
    h.clock.advance(1000);
    const trigger = (
      await h.call('POST', '/v1/triggers', {
        body: {
          kind: 'schedule',
          name: 'nightly',
          prompt: 'Tidy up',
          workspace: h.workspace,
          cron: '0 3 * * *',
        },
      })
    ).body;
    expect(trigger.schedule?.job_id).toBeTruthy();
    return {
      mine,
      theirs,
      a: a.id,
      b: b.id,
      c: c.id,
      s: trigger.schedule.job_id as string,
      trigger: trigger.id,
    };
  }

  it('lists the jobs of every session and every scheduled trigger, oldest first, in pages', async () => {
    const g = await given();
    const all = await list();
    expect(all.items.map((j) => j.id)).toEqual([g.a, g.b, g.c, g.s]);
    expect(all.next_cursor).toBeNull();
    expect(all.items[3]).toMatchObject({ id: g.s, trigger_id: g.trigger, expires_at: null });
    expect(all.items[0]).toMatchObject({
      session_id: g.mine,
      status: 'active',
      expires_at: iso(T0 + 7 * DAY),
    });

    const first = await list('?limit=3');
    expect(first.items.map((j) => j.id)).toEqual([g.a, g.b, g.c]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await list(`?limit=3&cursor=${first.next_cursor}`);
    expect(second.items.map((j) => j.id)).toEqual([g.s]);
    expect(second.next_cursor).toBeNull();
  });

  it('filters by session, trigger, enabled and expiry', async () => {
    const g = await given();
    expect(await ids(`?session_id=${g.mine}`)).toEqual([g.a, g.b]);
    expect(await ids(`?session_id=ses_nothing`)).toEqual([]);
    expect(await ids(`?trigger_id=${g.trigger}`)).toEqual([g.s]);
    expect(await ids('?enabled=true')).toEqual([g.a, g.c, g.s]);
    expect(await ids('?enabled=false')).toEqual([g.b]);
    // Disabling a scheduled trigger takes its job out of the enabled ones.
    const off = await h.call('PATCH', `/v1/triggers/${g.trigger}`, { body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(await ids('?enabled=true')).toEqual([g.a, g.c]);
    expect(await ids(`?enabled=false&trigger_id=${g.trigger}`)).toEqual([g.s]);
    // Recurring jobs expire 7 days after they were made; the one-shot and the trigger's job never do.
    expect(await ids(`?expiring_before=${iso(T0 + 8 * DAY)}`)).toEqual([g.a, g.c]);
    expect(await ids(`?expiring_before=${iso(T0 + 7 * DAY + 1500)}`)).toEqual([g.a]);
    expect(await ids(`?expiring_before=${encodeURIComponent('2026-06-08T10:00:00+02:00')}`)).toEqual([]);
    expect(await ids(`?expiring_before=${iso(T0 + 8 * DAY)}&session_id=${g.theirs}`)).toEqual([g.c]);
  });

  it('every role reads every job, as it reads every session; only operators act on them', async () => {
    const g = await given();
    // The viewer sees the operator's and the admin's jobs alike, as GET /v1/sessions/:id/jobs shows them.
    const seen = await list('', 'viewer');
    expect(seen.items.map((j) => j.id)).toEqual([g.a, g.b, g.c, g.s]);
    const direct = await h.call('GET', `/v1/sessions/${g.theirs}/jobs`, { role: 'viewer' });
    expect(direct.body.items.map((j: { id: string }) => j.id)).toEqual([g.c]);
    expect((await list('', 'approver')).items).toHaveLength(4);
    expectError(await h.call('POST', `/v1/jobs/${g.c}/pause`, { role: 'viewer' }), 403, 'forbidden');
    expectError(await h.call('POST', `/v1/jobs/${g.c}/run`, { role: 'approver' }), 403, 'forbidden');
    expectError(await h.call('GET', '/v1/jobs', { token: null }), 401, 'unauthorized');
  });

  it('refuses bad values in the usual error shape', async () => {
    const enabled = expectError(await h.call('GET', '/v1/jobs?enabled=yes'), 422, 'invalid_request');
    expect(enabled.message).toMatch(/^enabled/);
    const when = expectError(
      await h.call('GET', '/v1/jobs?expiring_before=tomorrow'),
      422,
      'invalid_request',
    );
    expect(when.message).toMatch(/^expiring_before/);
    expectError(await h.call('GET', '/v1/jobs?limit=0'), 422, 'invalid_request');
    expectError(await h.call('GET', '/v1/jobs?session=ses_1'), 422, 'invalid_request');
    expectError(await h.call('GET', '/v1/jobs?cursor=nope'), 400, 'bad_cursor');
  });
});
