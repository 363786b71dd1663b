import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewTriggerRequest } from '../../src/triggers/admin.js';
import { parseTriggerToken, secretMatches } from '../../src/triggers/tokens.js';
import { type AdminWorld, adminWorld, refusal } from '../support/admin-services.js';

// Trigger administration without HTTP: tokens, and the job a scheduled trigger owns following its trigger.

let w: AdminWorld;
beforeEach(async () => {
  w = await adminWorld();
});
afterEach(async () => {
  await w.close();
});

const request = (over: Partial<NewTriggerRequest> = {}): NewTriggerRequest => ({
  name: 'fire',
  kind: 'generic',
  prompt: 'look at {{trigger}}',
  workspace: w.workspace,
  options: {},
  enabled: true,
  createdBy: 'ops',
  ...over,
});

/** Whether `token` authenticates the stored trigger `id`, as the fire route checks it. */
async function authenticates(token: string, id: string): Promise<boolean> {
  const parsed = parseTriggerToken(token)!;
  const found = await w.store.findTriggerByToken(parsed.tokenId);
  return found?.id === id && secretMatches(parsed.secret, found.tokenHash);
}

describe('TriggerAdmin', () => {
  it('issues a generic trigger a token once (only its hash stored); rotating replaces it', async () => {
    const { triggerAdmin } = w.services;
    const { trigger, token } = await triggerAdmin.create(request({ hourlyCap: 7 }));
    expect(trigger.hourlyCap).toBe(7);
    expect(token).toMatch(/^ddt_/);
    expect(JSON.stringify(await triggerAdmin.get(trigger.id))).not.toContain(token!.split('.')[1]);
    expect(await authenticates(token!, trigger.id)).toBe(true);

    const renamed = await triggerAdmin.update(trigger, { role: 'operator', name: 'renamed' });
    expect(renamed).toMatchObject({ token: null, trigger: { name: 'renamed' } });
    expect(await authenticates(token!, trigger.id)).toBe(true);

    const rotated = await triggerAdmin.update(trigger, { role: 'operator', rotateToken: true });
    expect(rotated.token).toMatch(/^ddt_/);
    expect(await authenticates(rotated.token!, trigger.id)).toBe(true);
    expect(await authenticates(token!, trigger.id)).toBe(false);
  });

  it('refuses a second trigger of a name, at creation and by renaming, naming the one that has it', async () => {
    const { triggerAdmin } = w.services;
    const first = (await triggerAdmin.create(request({ name: 'nightly' }))).trigger;
    const again = await refusal(
      triggerAdmin.create(
        request({ name: 'nightly', kind: 'schedule', cron: '0 3 * * *', prompt: 'tidy up' }),
      ),
    );
    expect([again.code, again.message]).toEqual([
      'conflict',
      `a trigger named "nightly" exists already (${first.id}); trigger names are unique`,
    ]);
    const other = (await triggerAdmin.create(request({ name: 'other' }))).trigger;
    expect((await refusal(triggerAdmin.update(other, { role: 'operator', name: 'nightly' }))).code).toBe(
      'conflict',
    );
    // Keeping its own name, or taking a free one, is no conflict.
    await triggerAdmin.update(first, { role: 'operator', name: 'nightly', prompt: 'again {{trigger}}' });
    await triggerAdmin.update(other, { role: 'operator', name: 'weekly' });
    expect((await w.store.listTriggers({})).map((t) => t.name).sort()).toEqual(['nightly', 'weekly']);
  });

  it('gives a github trigger no token and the configured hourly cap by default', async () => {
    const { trigger, token } = await w.services.triggerAdmin.create(
      request({ kind: 'github', events: ['pull_request.opened'], workspace: null, prompt: 'review' }),
    );
    expect(token).toBeNull();
    expect(trigger).toMatchObject({ tokenId: null, hourlyCap: w.config.github.trigger_hourly_cap });
  });

  it('a scheduled trigger’s job follows it: created with it, paused and resumed with enabled, redefined, deleted', async () => {
    const { triggerAdmin } = w.services;
    const { trigger } = await triggerAdmin.create(
      request({
        kind: 'schedule',
        prompt: 'review main',
        cron: '0 3 * * *',
        timezone: 'UTC',
        approximate: false,
      }),
    );
    const job = (await triggerAdmin.jobOf(trigger))!;
    expect(job).toMatchObject({
      triggerId: trigger.id,
      cron: '0 3 * * *',
      status: 'active',
      expiresAt: null,
    });
    expect((await w.store.getSession(job.sessionId))?.scopeKey).toBe(`schedule:${trigger.id}`);

    await triggerAdmin.update(trigger, { role: 'operator', enabled: false });
    expect((await triggerAdmin.jobOf(trigger))?.status).toBe('paused');
    await triggerAdmin.update(trigger, { role: 'operator', enabled: true });
    expect((await triggerAdmin.jobOf(trigger))?.status).toBe('active');

    await triggerAdmin.update(trigger, { role: 'operator', cron: '15 4 * * *', prompt: 'review main again' });
    expect(await triggerAdmin.jobOf(trigger)).toMatchObject({
      id: job.id,
      cron: '15 4 * * *',
      prompt: 'review main again',
      status: 'active',
    });
    // A change with an unusable schedule is refused whole: the name given with it is not written either.
    expect(
      (await refusal(triggerAdmin.update(trigger, { role: 'operator', name: 'renamed', cron: 'not a cron' })))
        .code,
    ).toBe('invalid_cron');
    expect((await triggerAdmin.get(trigger.id)).name).toBe(trigger.name);
    expect((await triggerAdmin.jobOf(trigger))?.cron).toBe('15 4 * * *');

    await triggerAdmin.delete(trigger.id);
    expect(await w.store.getJob(job.id)).toBeNull();
    expect((await refusal(triggerAdmin.get(trigger.id))).code).toBe('not_found');
    expect((await refusal(triggerAdmin.delete(trigger.id))).code).toBe('not_found');
    expect((await refusal(triggerAdmin.update(trigger, { role: 'operator', name: 'x' }))).code).toBe(
      'not_found',
    );
  });

  it('refuses a request that does not fit its kind, with nothing written', async () => {
    const { triggerAdmin } = w.services;
    const refused = async (over: Partial<NewTriggerRequest>) => {
      const err = await refusal(triggerAdmin.create(request(over)));
      return `${err.code}: ${err.message}`;
    };
    expect(await refused({ kind: 'github', events: [], workspace: null, prompt: 'review' })).toMatch(
      /^invalid_request: a github trigger needs events/,
    );
    expect(await refused({ workspace: null })).toBe(
      'invalid_request: a generic trigger needs a workspace directory',
    );
    expect(await refused({ kind: 'schedule', prompt: 'nightly' })).toMatch(
      /^invalid_request: a schedule trigger needs cron/,
    );
    expect(await refused({ kind: 'schedule', prompt: 'nightly {{trigger}}', cron: '0 3 * * *' })).toMatch(
      /^invalid_prompt: a schedule trigger has no event to fill/,
    );
    expect(await refused({ cron: '0 3 * * *' })).toBe(
      'invalid_request: cron, timezone, approximate, overlap and jitter are for schedule triggers',
    );
    expect(await refused({ prompt: 'look at {{nothing}}' })).toMatch(
      /^invalid_prompt: prompt names unknown placeholders \{\{nothing\}\}/,
    );
    expect(await refused({ workspace: 'relative/dir' })).toMatch(/^invalid_workspace: /);
    expect(await refused({ workspace: `${w.workspace}/missing` })).toMatch(
      /^invalid_workspace: workspace .* is not an existing directory$/,
    );
    expect(
      await refused({ kind: 'schedule', prompt: 'n', cron: '0 3 * * *', timezone: 'Mars/Base' }),
    ).toMatch(/^invalid_timezone: timezone: unknown IANA time zone "Mars\/Base"/);
    expect(await w.store.listTriggers({})).toEqual([]);

    const { trigger } = await triggerAdmin.create(request());
    const change = async (c: Omit<Parameters<typeof triggerAdmin.update>[1], 'role'>) =>
      (await refusal(triggerAdmin.update(trigger, { role: 'operator', ...c }))).code;
    expect(await change({ name: 'x', cron: '0 3 * * *' })).toBe('invalid_request');
    expect(await change({ name: 'x', workspace: 'relative' })).toBe('invalid_workspace');
    expect(await change({ name: 'x', prompt: '{{nope}}' })).toBe('invalid_prompt');
    expect((await triggerAdmin.get(trigger.id)).name).toBe('fire');
  });
});
