import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlotOutcome } from '../../src/domain/types.js';
import { slotBadge } from '../../src/ui/pages/schedule-tables.js';
import { createHarness, type Harness } from '../support/harness.js';
import { signIn, ui } from './helpers.js';
import { type SeededSchedules, seedSchedules } from './schedule-seed.js';

// The Schedules page: scheduled triggers and sessions' jobs with their next fire times and last slots
// (linked to runs and plans), and the pause, resume and run-now forms for those who may use them.

let h: Harness;
let s: SeededSchedules;
beforeEach(async () => {
  h = await createHarness();
  s = await seedSchedules({
    api: (method, path, body) => h.call(method, path, { body }),
    store: h.store,
    now: () => h.clock.now(),
    workspace: h.workspace,
  });
});
afterEach(async () => {
  await h.close();
});

/** The markup of one table row, by its id. */
function row(page: string, id: string): string {
  const start = page.indexOf(`<tr id="${id}">`);
  expect(start, id).toBeGreaterThanOrEqual(0);
  return page.slice(start, page.indexOf('</tr>', start));
}

describe('the Schedules page', () => {
  it('lists scheduled triggers and session jobs with next fire times and their last slots, linked', async () => {
    const { cookie } = await signIn(h.app, h.tokens.operator);
    const page = await ui(h.app, 'GET', '/ui/schedules', { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<caption>Scheduled triggers</caption>');
    expect(page.text).toContain('<caption>Session jobs</caption>');

    const trigger = row(page.text, `trigger-${s.triggerId}`);
    expect(trigger).toContain('nightly review');
    expect(trigger).toContain('<code>0 3 * * *</code>');
    expect(trigger.match(/<li><time datetime=/g)).toHaveLength(3);
    // Newest first: the fired slot (its run and the plan it proposed), then the slot coalesced into it.
    const badges = [...trigger.matchAll(/<a class="slot slot-(\w+)" href="([^"]+)"/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(badges).toEqual([
      ['fired', `/ui/runs/${s.runId}`],
      ['coalesced', `/ui/runs/${s.runId}`],
    ]);
    expect(trigger.match(new RegExp(`href="/ui/plans/${s.planId}"`, 'g'))).toHaveLength(2);
    expect(trigger).toContain(`action="/ui/schedules/triggers/${s.triggerId}/pause"`);
    expect(trigger).toContain(`action="/ui/schedules/triggers/${s.triggerId}/run"`);

    const job = row(page.text, `job-${s.jobId}`);
    expect(job).toContain('docs team');
    expect(job).toContain('<strong>daily review</strong>');
    expect(job).toContain('Review yesterday’s commits');
    expect(job).toContain('<span class="slot slot-missed" title="missed ×3: slot ');
    expect(job.match(/<time datetime=/g)).toHaveLength(4); // 3 next fire times and the expiry
    expect(job).toContain(`action="/ui/schedules/jobs/${s.jobId}/pause"`);
    expect(job).toContain(`action="/ui/schedules/jobs/${s.jobId}/run"`);
    // The trigger's job is not listed again among the session jobs.
    expect(page.text).not.toContain(`id="job-${s.triggerJobId}"`);
  });

  it('pages the session jobs, and reads a page link it did not make as the first page', async () => {
    const { cookie } = await signIn(h.app, h.tokens.viewer);
    const bad = await ui(h.app, 'GET', '/ui/schedules?cursor=nope', { cookie });
    expect(bad.status).toBe(200);
    expect(bad.text).toContain('That page link was not one of ours; showing the first page.');
    expect(bad.text).toContain(`id="job-${s.jobId}"`);
    // 51 session jobs in all (the seeded one first): the second page holds the last one, by its link.
    const session = (await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } })).body.id;
    for (let i = 0; i < 50; i++) {
      h.clock.advance(1);
      const made = await h.call('POST', `/v1/sessions/${session}/jobs`, {
        body: { cron: '0 9 * * *', prompt: `p${i}` },
      });
      expect(made.status).toBe(201);
    }
    const first = await ui(h.app, 'GET', '/ui/schedules', { cookie });
    expect(first.text.match(/<tr id="job-/g)).toHaveLength(50);
    const next = /<a href="(\/ui\/schedules\?cursor=[^"]+)">Next page of jobs<\/a>/.exec(first.text);
    expect(next).not.toBeNull();
    const second = await ui(h.app, 'GET', next![1]!, { cookie });
    expect(second.text.match(/<tr id="job-/g)).toHaveLength(1);
    expect(second.text).toContain('<span class="muted">p49</span>');
    expect(second.text).not.toContain('Next page of jobs');
  });

  it('shows no forms to a viewer and refuses their post', async () => {
    const { cookie, csrf } = await signIn(h.app, h.tokens.viewer);
    const page = await ui(h.app, 'GET', '/ui/schedules', { cookie });
    expect(page.text).toContain('Your role (viewer) may read schedules but not pause, resume or run them.');
    expect(page.text).not.toContain('action="/ui/schedules/');
    const refused = await ui(h.app, 'POST', `/ui/schedules/jobs/${s.jobId}/pause`, {
      cookie,
      form: { csrf },
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Your role (viewer) may not pause, resume or run schedules.');
    expect((await h.call('GET', `/v1/jobs/${s.jobId}`)).body.status).toBe('active');
  });

  it('pauses and resumes a session job, disables a trigger, and runs one now, each with a notice', async () => {
    const { cookie, csrf } = await signIn(h.app, h.tokens.operator);
    const post = (path: string) => ui(h.app, 'POST', path, { cookie, form: { csrf } });
    const follow = async (res: Awaited<ReturnType<typeof post>>) => {
      expect(res.status, res.text).toBe(303);
      return ui(h.app, 'GET', res.headers.get('location')!, { cookie });
    };

    const paused = await follow(await post(`/ui/schedules/jobs/${s.jobId}/pause`));
    expect(paused.text).toContain(
      `<div class="alert notice" role="status"><p>Job ${s.jobId} paused.</p></div>`,
    );
    expect((await h.call('GET', `/v1/jobs/${s.jobId}`)).body.status).toBe('paused');
    expect(row(paused.text, `job-${s.jobId}`)).toContain(`action="/ui/schedules/jobs/${s.jobId}/resume"`);
    await follow(await post(`/ui/schedules/jobs/${s.jobId}/resume`));
    expect((await h.call('GET', `/v1/jobs/${s.jobId}`)).body.status).toBe('active');

    const off = await follow(await post(`/ui/schedules/triggers/${s.triggerId}/pause`));
    expect(off.text).toContain('Trigger nightly review paused.');
    expect((await h.call('GET', `/v1/triggers/${s.triggerId}`)).body).toMatchObject({
      enabled: false,
      schedule: { status: 'paused' },
    });
    expect(row(off.text, `trigger-${s.triggerId}`)).toContain(
      `action="/ui/schedules/triggers/${s.triggerId}/resume"`,
    );

    const ran = await follow(await post(`/ui/schedules/triggers/${s.triggerId}/run`));
    const runs = (await h.call('GET', `/v1/runs?job_id=${s.triggerJobId}`)).body.items;
    const manual = runs.find((r: { source: string }) => r.source === 'manual');
    expect(manual).toMatchObject({ requested_by: 'operator-user', status: 'queued' });
    expect(ran.text).toContain(
      `Run <a href="/ui/runs/${manual.id}">${manual.id}</a> of trigger nightly review was queued.`,
    );
  });

  it("takes a post only from a signed-in operator with the session's CSRF token", async () => {
    const path = `/ui/schedules/triggers/${s.triggerId}/pause`;
    expect((await ui(h.app, 'POST', path, { form: { csrf: 'x' } })).status).toBe(401);
    const { cookie } = await signIn(h.app, h.tokens.operator);
    expect((await ui(h.app, 'POST', path, { cookie, form: { csrf: 'forged' } })).status).toBe(403);
    expect((await h.call('GET', `/v1/triggers/${s.triggerId}`)).body.enabled).toBe(true);
    expect((await ui(h.app, 'GET', '/ui/schedules')).status).toBe(303);
  });

  it('shows a refusal from the service on the page, with its status', async () => {
    const { cookie, csrf } = await signIn(h.app, h.tokens.operator);
    const res = await ui(h.app, 'POST', `/ui/schedules/jobs/${s.triggerJobId}/pause`, {
      cookie,
      form: { csrf },
    });
    expect(res.status).toBe(409);
    expect(res.text).toContain(`fires schedule trigger ${s.triggerId}: change, pause or delete it through`);
    const unknown = await ui(h.app, 'POST', `/ui/schedules/jobs/${s.jobId}/frob`, { cookie, form: { csrf } });
    expect(unknown.status).toBe(404);
    const gone = await ui(h.app, 'POST', '/ui/schedules/jobs/job_nothing/run', { cookie, form: { csrf } });
    expect(gone.status).toBe(404);
    expect(gone.text).toContain('job job_nothing not found');
  });
});

describe('a slot badge', () => {
  const slot = {
    jobId: 'job_1',
    slotAt: 0,
    lastSlotAt: 0,
    slots: 1,
    runId: null,
    recordedAt: 0,
    planId: null,
  };
  it('renders an outcome it has no rule for as it is, and escapes what it prints', () => {
    expect(slotBadge({ ...slot, outcome: 'buffered' }).value).toBe(
      '<li><span class="slot slot-buffered" title="buffered: slot 1970-01-01 00:00 UTC">buffered</span></li>',
    );
    const odd = slotBadge({ ...slot, outcome: 'new"<b>' as SlotOutcome }).value;
    expect(odd).toContain('class="slot slot-newb"');
    expect(odd).toContain('>new&quot;&lt;b&gt;</span>');
  });
});
