import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ROUTES } from '../../src/http/contract/index.js';
import { createHarness, type Harness } from '../support/harness.js';
import { expectError, jobIds } from './helpers.js';

// Who may loosen what (README, Security model): execute_mode (manual < edits < auto), network (none < any)
// and allow_self_approval (off < on) decide how much an execution does without a person. Only an admin makes
// something that exists more permissive: a job looser than its session, a trigger changed to be looser.
// Lowering, and leaving a setting unset so that it inherits, is always allowed.

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => h.close());

const LOOSEST = { execute_mode: 'auto', network: true, allow_self_approval: true };
const STRICTEST = { execute_mode: 'manual', network: false, allow_self_approval: false };

/** A session an admin made, with these defaults. */
async function adminSession(defaults: Record<string, unknown>): Promise<string> {
  const res = await h.call('POST', '/v1/sessions', {
    role: 'admin',
    body: { workspace: h.workspace, defaults },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.owner).toBe('admin-user');
  return res.body.id;
}

const addJob = (sessionId: string, options: Record<string, unknown>, role: 'admin' | 'operator') =>
  h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
    role,
    body: { cron: '30 9 * * *', prompt: 'review the open pull requests', options },
  });

describe('a job is never more permissive than its session unless an admin makes it so', () => {
  it("an operator's job looser than an admin's manual, offline session: 403 naming every setting, nothing created", async () => {
    const id = await adminSession(STRICTEST);
    const err = expectError(await addJob(id, LOOSEST, 'operator'), 403, 'forbidden');
    expect(err.message).toContain('execute_mode auto (session: manual)');
    expect(err.message).toContain('network true (session: false)');
    expect(err.message).toContain('allow_self_approval true (session: false)');
    expect(err.message).toMatch(/only an admin/);
    expect(err.message).toContain(id);
    expect(await jobIds(h, id)).toEqual([]);
  });

  it.each([
    [{ execute_mode: 'edits' }, 'execute_mode edits (session: manual)'],
    [{ network: true }, 'network true (session: false)'],
    [{ allow_self_approval: true }, 'allow_self_approval true (session: false)'],
  ])('each setting alone is refused to an operator: %j', async (options, named) => {
    const id = await adminSession(STRICTEST);
    const err = expectError(await addJob(id, options, 'operator'), 403, 'forbidden');
    expect(err.message).toContain(named);
    for (const other of ['execute_mode', 'network', 'allow_self_approval'].filter((k) => !(k in options))) {
      expect(err.message).not.toContain(`${other} `);
    }
    expect(await jobIds(h, id)).toEqual([]);
  });

  it('a session that leaves a setting unset has the strictest value for its jobs (manual, no network)', async () => {
    const id = await adminSession({ model: 'claude-opus-5-5' });
    const err = expectError(await addJob(id, { execute_mode: 'edits' }, 'operator'), 403, 'forbidden');
    expect(err.message).toContain('execute_mode edits (session: manual)');
    expect(await jobIds(h, id)).toEqual([]);
  });

  it('refuses the operator even on a session of their own: the session is the policy of its jobs', async () => {
    const own = await h.call('POST', '/v1/sessions', {
      role: 'operator',
      body: { workspace: h.workspace, defaults: { execute_mode: 'edits' } },
    });
    expect(own.status).toBe(201);
    expectError(await addJob(own.body.id, { execute_mode: 'auto' }, 'operator'), 403, 'forbidden');
  });

  it('an admin may add the looser job (201), stored with its options as given', async () => {
    const id = await adminSession(STRICTEST);
    const res = await addJob(id, LOOSEST, 'admin');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.options).toEqual(LOOSEST);
    expect(await jobIds(h, id)).toEqual([res.body.id]);
  });

  it.each([
    ['leaves every setting unset (inherits the session’s)', {}],
    ['sets them equal to the session’s', LOOSEST],
    ['sets them stricter', STRICTEST],
    ['mixes equal, stricter and unset', { execute_mode: 'edits', network: true }],
  ])('an operator may add a job that %s', async (_, options) => {
    const id = await adminSession(LOOSEST);
    const res = await addJob(id, options, 'operator');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.options).toEqual(options);
  });

  it('an operator may add a job stricter than a manual session in other ways than these three', async () => {
    const id = await adminSession(STRICTEST);
    const res = await addJob(id, { ...STRICTEST, max_turns: 5, approvals_required: 2 }, 'operator');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

describe('a job changed later is held to its session as at creation', () => {
  it("an operator's PATCH raising a job above an admin's session: 403, the job unchanged; an admin's: 200", async () => {
    const id = await adminSession(STRICTEST);
    const created = await addJob(id, {}, 'operator');
    expect(created.status).toBe(201);
    const patch = (options: Record<string, unknown>, role: 'admin' | 'operator') =>
      h.call('PATCH', `/v1/jobs/${created.body.id}`, { role, body: { options } });
    const err = expectError(await patch({ execute_mode: 'edits' }, 'operator'), 403, 'forbidden');
    expect(err.message).toContain('execute_mode edits (session: manual)');
    expect((await h.call('GET', `/v1/jobs/${created.body.id}`)).body.options).toEqual({});
    expect((await patch({ max_turns: 3 }, 'operator')).status).toBe(200);
    const raised = await patch(LOOSEST, 'admin');
    expect(raised.status).toBe(200);
    expect(raised.body.options).toEqual(LOOSEST);
  });
});

describe("a session's settings are fixed when it is made", () => {
  it('no route changes a session after creation: an operator raising an admin’s session gets nowhere', async () => {
    const id = await adminSession(STRICTEST);
    for (const method of ['PATCH', 'PUT']) {
      const res = await h.call(method, `/v1/sessions/${id}`, {
        role: 'operator',
        body: { defaults: LOOSEST },
      });
      expect(res.status).toBe(404);
    }
    expect((await h.call('GET', `/v1/sessions/${id}`)).body.defaults).toEqual(STRICTEST);
    // Run options reach the store through these routes only, each checked by src/domain/loosening.ts (a new
    // session or trigger starts where its creator sets it). A route added that takes `defaults` or `options`
    // must refuse a non-admin's raise before it joins this list.
    const takingOptions = ROUTES.filter((r) => {
      const body = r.request?.body;
      return body instanceof z.ZodObject && ('defaults' in body.shape || 'options' in body.shape);
    }).map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(takingOptions.sort()).toEqual([
      'PATCH /v1/jobs/{id}',
      'PATCH /v1/triggers/{id}',
      'POST /v1/sessions',
      'POST /v1/sessions/{id}/jobs',
      'POST /v1/triggers',
    ]);
  });
});

describe('a trigger is raised only by an admin', () => {
  async function adminTrigger(options: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const res = await h.call('POST', '/v1/triggers', {
      role: 'admin',
      body: {
        kind: 'generic',
        name: 'nightly',
        prompt: 'Look at what was sent.',
        workspace: h.workspace,
        options,
        ...extra,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  const patch = (id: string, body: Record<string, unknown>, role: 'admin' | 'operator') =>
    h.call('PATCH', `/v1/triggers/${id}`, { role, body });

  it("an operator raising an admin's trigger: 403 naming the settings, the trigger unchanged", async () => {
    const t = await adminTrigger(STRICTEST);
    const err = expectError(
      await patch(t.id, { options: LOOSEST, name: 'renamed' }, 'operator'),
      403,
      'forbidden',
    );
    expect(err.message).toContain('execute_mode auto (now: manual)');
    expect(err.message).toContain('network true (now: false)');
    expect(err.message).toContain('allow_self_approval true (now: false)');
    expect(err.message).toMatch(/only an admin/);
    const after = (await h.call('GET', `/v1/triggers/${t.id}`)).body;
    expect(after).toMatchObject({ name: 'nightly', options: STRICTEST });
  });

  it('an option left out of a change is the strictest: dropping execute_mode lowers, never raises', async () => {
    const t = await adminTrigger({ execute_mode: 'auto', network: true });
    const res = await patch(t.id, { options: { model: 'claude-opus-5-5' } }, 'operator');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.options).toEqual({ model: 'claude-opus-5-5' });
  });

  it('an operator may lower a trigger, or change what does not raise it; an admin may raise it', async () => {
    const t = await adminTrigger({ execute_mode: 'edits' });
    expect((await patch(t.id, { name: 'renamed' }, 'operator')).status).toBe(200);
    const lowered = await patch(t.id, { options: { execute_mode: 'manual' } }, 'operator');
    expect(lowered.status).toBe(200);
    expect(lowered.body.options).toEqual({ execute_mode: 'manual' });
    // Having lowered it, the operator cannot put it back: that is a raise.
    expectError(await patch(t.id, { options: { execute_mode: 'edits' } }, 'operator'), 403, 'forbidden');
    const raised = await patch(t.id, { options: LOOSEST }, 'admin');
    expect(raised.status).toBe(200);
    expect(raised.body.options).toEqual(LOOSEST);
  });

  it("a scheduled trigger's job keeps its options when an operator's raise is refused", async () => {
    const t = await adminTrigger(STRICTEST, {
      kind: 'schedule',
      cron: '0 3 * * *',
      timezone: 'UTC',
      prompt: 'Review what changed yesterday.',
    });
    expectError(
      await patch(t.id, { options: { execute_mode: 'auto' }, cron: '0 4 * * *' }, 'operator'),
      403,
      'forbidden',
    );
    const job = (await h.call('GET', `/v1/jobs/${t.schedule.job_id}`)).body;
    expect(job).toMatchObject({ cron: '0 3 * * *', options: STRICTEST });
  });
});
