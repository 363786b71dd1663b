import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

// Sessions, jobs and triggers that name a retired model are refused over the API (422 invalid_model, the
// replacement named); /readyz warns, and stays ready, while the default model retires within 30 days.

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const DEC_4 = Date.parse('2026-12-04T09:00:00Z');
const SONNET_45_RETIRED =
  'claude-sonnet-4-5 retired on 2026-11-30 and no longer answers; use claude-sonnet-5-5 (docs/models.md)';

describe('a retired model named over the API', () => {
  it('is refused for a session, a job and a trigger, created or changed, with the replacement named', async () => {
    h = await createHarness({ now: DEC_4 });
    const refused = { error: { code: 'invalid_model', message: SONNET_45_RETIRED } };

    const session = await h.call('POST', '/v1/sessions', {
      body: { workspace: h.workspace, defaults: { model: 'claude-sonnet-4-5' } },
    });
    expect(session.status).toBe(422);
    expect(session.body).toEqual(refused);
    // Its dated ID is the same model.
    const dated = await h.call('POST', '/v1/sessions', {
      body: { workspace: h.workspace, defaults: { model: 'claude-sonnet-4-5-20250929' } },
    });
    expect(dated.status).toBe(422);
    expect(dated.body.error.message).toMatch(
      /^claude-sonnet-4-5-20250929 retired on 2026-11-30 .* claude-sonnet-5-5/,
    );

    const ok = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    expect(ok.status).toBe(201);
    const job = await h.call('POST', `/v1/sessions/${ok.body.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'work', options: { model: 'claude-sonnet-4-5' } },
    });
    expect(job.status).toBe(422);
    expect(job.body).toEqual(refused);

    const trigger = (options: Record<string, unknown>) =>
      h.call('POST', '/v1/triggers', {
        role: 'admin',
        body: { kind: 'generic', name: 'nightly', prompt: 'Look.', workspace: h.workspace, options },
      });
    const created = await trigger({ model: 'claude-sonnet-4-5' });
    expect(created.status).toBe(422);
    expect(created.body).toEqual(refused);
    const fine = await trigger({ model: 'claude-opus-4-5' });
    expect(fine.status, JSON.stringify(fine.body)).toBe(201);
    const changed = await h.call('PATCH', `/v1/triggers/${fine.body.id}`, {
      role: 'admin',
      body: { options: { model: 'claude-opus-4-1' } },
    });
    expect(changed.status).toBe(422);
    expect(changed.body.error.message).toBe(
      'claude-opus-4-1 retired on 2026-08-05 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    );
    // Nothing was written by the refusals.
    expect((await h.store.listSessions({ limit: 10 })).items).toHaveLength(1);
    expect((await h.call('GET', `/v1/triggers/${fine.body.id}`)).body.options.model).toBe('claude-opus-4-5');
  });

  it('is accepted the day before its retirement, refused from the day on (the harness clock decides)', async () => {
    h = await createHarness({ now: Date.parse('2026-11-29T23:59:00Z') });
    const create = () =>
      h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, defaults: { model: 'claude-sonnet-4-5' } },
      });
    expect((await create()).status).toBe(201);
    h.clock.advance(60_000);
    expect((await create()).status).toBe(422);
  });
});

describe('/readyz and a retiring default model', () => {
  it('warns within 30 days of the retirement and stays ready; says nothing further off', async () => {
    h = await createHarness({
      now: Date.parse('2026-12-22T23:59:59Z'),
      patch: (c) => {
        c.anthropic.model = 'claude-opus-4-5';
      },
    });
    h.scheduler.start();
    const far = await h.call('GET', '/readyz', { token: null });
    expect(far.status).toBe(200);
    expect(far.body.warnings).toBeUndefined();

    h.clock.advance(1_000);
    const soon = await h.call('GET', '/readyz', { token: null });
    expect(soon.status).toBe(200);
    expect(soon.body).toMatchObject({
      status: 'ready',
      model: { id: 'claude-opus-4-5' },
      warnings: ['claude-opus-4-5 retires on 2027-01-22 (in 30 days); move to claude-opus-5-5 before then'],
    });

    // Retired while the daemon runs: still ready (plans and history stay readable), the warning says so.
    h.clock.set(Date.parse('2027-01-22T00:00:00Z'));
    const gone = await h.call('GET', '/readyz', { token: null });
    expect(gone.status).toBe(200);
    expect(gone.body.warnings).toEqual([
      'claude-opus-4-5 retired on 2027-01-22 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    ]);
  });
});
