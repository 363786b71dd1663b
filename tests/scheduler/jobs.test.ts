import { afterEach, describe, expect, it } from 'vitest';
import { type AdminWorld, adminWorld, job, refusal } from '../support/admin-services.js';

// Jobs without HTTP: the rules the API's job routes answer with, called on the service directly.

let w: AdminWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

async function session(world: AdminWorld): Promise<string> {
  const s = await world.services.sessions.create({ workspace: world.workspace, owner: 'ops', defaults: {} });
  return s.id;
}

describe('Jobs', () => {
  it('refuses a job past scheduler.max_jobs_per_session with a conflict, leaving the limit’s number', async () => {
    w = await adminWorld((c) => {
      c.scheduler.max_jobs_per_session = 2;
    });
    const id = await session(w);
    await w.services.jobs.create(id, job());
    await w.services.jobs.create(id, job({ cron: '0 3 * * *' }));
    const err = await refusal(w.services.jobs.create(id, job({ cron: '0 4 * * *' })));
    expect(err.code).toBe('conflict');
    expect(err.message).toContain('2 jobs');
    expect(await w.services.jobs.list(id)).toHaveLength(2);
  });

  it('refuses an unknown session (not_found) and an unusable cron (invalid_cron), creating nothing', async () => {
    w = await adminWorld();
    const id = await session(w);
    expect((await refusal(w.services.jobs.create('ses_nope', job()))).code).toBe('not_found');
    expect((await refusal(w.services.jobs.create(id, job({ cron: '61 * * * *' })))).code).toBe(
      'invalid_cron',
    );
    expect(await w.services.jobs.list(id)).toEqual([]);
  });

  it('changes a schedule trigger’s job only through its trigger (managed_by_trigger), but runs it now', async () => {
    w = await adminWorld();
    const { jobs, triggerAdmin } = w.services;
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
    const owned = (await w.store.jobOfTrigger(trigger.id))!;
    for (const attempt of [
      jobs.pause(owned.id),
      jobs.resume(owned.id),
      jobs.renew(owned.id, 'ops'),
      jobs.delete(owned.id),
    ]) {
      const err = await refusal(attempt);
      expect(err.code).toBe('managed_by_trigger');
      expect(err.message).toContain(trigger.id);
    }
    expect(await jobs.get(owned.id)).toMatchObject({ status: 'active', expiresAt: null });

    const run = await jobs.runNow(owned.id, 'ops');
    expect(run).toMatchObject({
      jobId: owned.id,
      triggerId: trigger.id,
      source: 'manual',
      requestedBy: 'ops',
    });
    expect(w.runs.map((r) => r.id)).toEqual([run.id]);
  });

  it('pauses and resumes: a one-shot whose time passed while paused waits as missed, and cannot be paused', async () => {
    w = await adminWorld();
    const { jobs } = w.services;
    const id = await session(w);
    const once = await jobs.create(id, job({ cron: '30 9 * * *', recurring: false }));
    expect((await jobs.pause(once.id)).status).toBe('paused');
    // Paused again it stays paused, its slot kept.
    expect(await jobs.pause(once.id)).toMatchObject({ status: 'paused', nextNominalAt: once.nextNominalAt });
    w.clock.advance(2 * 86_400_000);
    const resumed = await jobs.resume(once.id);
    expect(resumed.status).toBe('missed');
    const err = await refusal(jobs.pause(once.id));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'conflict',
      message: 'a missed one-shot cannot be paused; run or delete it',
    });
    expect((await refusal(jobs.resume(once.id))).message).toBe('job is missed, not paused');
  });

  it('renews a recurring job for another expiry period and refuses a one-shot', async () => {
    w = await adminWorld();
    const { jobs } = w.services;
    const id = await session(w);
    const daily = await jobs.create(id, job());
    w.clock.advance(3_600_000);
    const renewed = await jobs.renew(daily.id, 'lead');
    expect(renewed.expiresAt).toBe(w.clock.now() + w.config.scheduler.recurring_expiry_ms);
    const once = await jobs.create(id, job({ recurring: false }));
    expect((await refusal(jobs.renew(once.id, 'lead'))).code).toBe('conflict');
    await jobs.delete(daily.id);
    expect((await refusal(jobs.get(daily.id))).code).toBe('not_found');
  });
});
