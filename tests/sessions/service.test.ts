import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AdminWorld, adminWorld, job, refusal } from '../support/admin-services.js';

// Sessions without HTTP: created, read and closed through the service the API calls.

let w: AdminWorld;
beforeEach(async () => {
  w = await adminWorld();
});
afterEach(async () => {
  await w.close();
});

describe('Sessions', () => {
  it('creates an open session named after its id unless named, and reads it back', async () => {
    const { sessions } = w.services;
    const unnamed = await sessions.create({ workspace: w.workspace, owner: 'ops', defaults: {} });
    expect(unnamed).toMatchObject({ name: unnamed.id, workspace: w.workspace, owner: 'ops', status: 'open' });
    expect(unnamed.id).toMatch(/^ses_/);
    const named = await sessions.create({
      name: 'nightly',
      workspace: w.workspace,
      owner: 'ops',
      defaults: { max_turns: 5 },
    });
    expect(await sessions.get(named.id)).toMatchObject({ name: 'nightly', defaults: { max_turns: 5 } });
    const missing = await refusal(sessions.get('ses_nope'));
    expect({ code: missing.code, message: missing.message }).toEqual({
      code: 'not_found',
      message: 'session ses_nope not found',
    });
  });

  it('closing deletes the session’s jobs, keeps its runs, and a second close deletes nothing more', async () => {
    const { sessions, jobs } = w.services;
    const s = await sessions.create({ workspace: w.workspace, owner: 'ops', defaults: {} });
    const first = await jobs.create(s.id, job());
    await jobs.create(s.id, job({ cron: '0 3 * * *' }));
    const run = await jobs.runNow(first.id, 'ops');

    const closed = await sessions.close(s.id);
    expect(closed.deletedJobs).toBe(2);
    expect(closed.session.status).toBe('closed');
    expect(await w.store.listJobs(s.id)).toEqual([]);
    expect(await w.store.getRun(run.id)).toMatchObject({ id: run.id, sessionId: s.id });

    const again = await sessions.close(s.id);
    expect(again).toMatchObject({ deletedJobs: 0, session: { status: 'closed' } });
    // A closed session takes no new job.
    expect((await refusal(jobs.create(s.id, job()))).code).toBe('conflict');
  });

  it('refuses to close a schedule trigger’s session (managed_by_trigger) and leaves it and its job as they were', async () => {
    const { sessions, triggerAdmin } = w.services;
    const { trigger } = await triggerAdmin.create({
      name: 'nightly',
      kind: 'schedule',
      prompt: 'review main',
      workspace: w.workspace,
      options: {},
      enabled: true,
      createdBy: 'ops',
      cron: '0 3 * * *',
      timezone: 'UTC',
      approximate: false,
    });
    const scheduled = (await w.store.jobOfTrigger(trigger.id))!;
    const err = await refusal(sessions.close(scheduled.sessionId));
    expect(err.code).toBe('managed_by_trigger');
    expect(err.message).toContain(trigger.id);
    expect((await sessions.get(scheduled.sessionId)).status).toBe('open');
    expect((await w.store.listJobs(scheduled.sessionId)).map((j) => j.id)).toEqual([scheduled.id]);
  });

  it('closing an unknown session is not_found', async () => {
    expect((await refusal(w.services.sessions.close('ses_nope'))).code).toBe('not_found');
  });
});
