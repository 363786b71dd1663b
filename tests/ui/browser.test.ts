import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import { newId } from '../../src/ids.js';
import { launchChromium, pwned, signInPage } from '../support/chromium.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import type { Harness } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { seedPlan } from './helpers.js';
import { seedSchedules } from './schedule-seed.js';

// A real daemon, a real git repository, the scripted model and Debian's chromium (installed by .ci/run;
// never a downloaded browser). The plan is hostile model output: none of it may run in the page.
// DRYDOCK_SCREENSHOTS=<dir> also saves the Schedules page (README, "Schedules") and the usage page
// (docs/screenshots/usage.png).

const SCREENSHOTS = process.env.DRYDOCK_SCREENSHOTS;

const PLAN = [
  '# Tidy up the README',
  '',
  '<script>window.__pwned = 1</script>',
  '',
  'Do not [click](javascript:window.__pwned=2) here.',
  '',
  'See [the guide](https://example.com/guide).',
  '',
  '<img src=x onerror="window.__pwned=3">',
  '',
  '1. Add NOTES.md with a short summary.',
].join('\n');

let model: ModelServer;
let d: TestDaemon;
let browser: Browser | null = null;
let repo: string;
let approverToken: string;

beforeAll(async () => {
  model = await startModelServer();
  d = await startTestDaemon({ modelUrl: model.url });
  repo = join(d.dir, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  // The admin requested the plan and may not approve it: a separate approver signs in.
  const issued = issueToken('alice', 'alice', 'approver', Date.now());
  await d.daemon.store.createToken(issued.record);
  approverToken = issued.token;
  browser = await launchChromium();
});

afterAll(async () => {
  // The browser first: an open EventSource would otherwise hold the daemon's server open.
  await browser?.close();
  await d?.stop();
  await model?.close();
});

describe('the approver page in a browser', () => {
  it('signs in, shows the queue, renders a hostile plan inert, approves it and follows the execution', async () => {
    model.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'Here is my plan.' },
          { type: 'tool_use', id: 'toolu_plan', name: 'ExitPlanMode', input: { plan: PLAN } },
        ],
      },
      // The execute phase: one Write, then a closing text reply.
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'Writing the notes.' },
          {
            type: 'tool_use',
            id: 'toolu_write',
            name: 'Write',
            input: { file_path: 'NOTES.md', content: '# Notes\n\nThe README is tidy.\n' },
          },
        ],
      },
      { kind: 'message', content: [{ type: 'text', text: 'Done: NOTES.md is written.' }] },
    );
    const session = await d.api('POST', '/v1/sessions', {
      workspace: repo,
      defaults: { execute_mode: 'edits' },
    });
    expect(session.status).toBe(201);
    const job = await d.api('POST', `/v1/sessions/${session.body.id}/jobs`, {
      cron: '0 9 * * *',
      prompt: 'Tidy up the README',
    });
    expect(job.status).toBe(201);
    expect((await d.api('POST', `/v1/jobs/${job.body.id}/run`)).status).toBe(201);
    const plan = await waitFor(
      async () => (await d.api('GET', '/v1/plans?status=pending_approval')).body.items[0],
      10_000,
      'a pending plan',
    );

    const page = await browser!.newPage();
    const dialogs: string[] = [];
    const cspViolations: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });

    // Not signed in: the queue sends us to the sign-in form.
    await page.goto(`${d.daemon.url}/ui`);
    expect(new URL(page.url()).pathname).toBe('/ui/login');
    await page.getByLabel('API token').fill(approverToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${d.daemon.url}/ui`);
    const cookies = await page.context().cookies();
    const session_ = cookies.find((c) => c.name === 'drydock_ui')!;
    expect(session_).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/ui' });
    expect(session_.value).not.toContain(approverToken);
    expect(await page.evaluate<string>('document.cookie')).not.toContain('drydock_ui=');

    // The queue shows the plan; open it.
    const row = page.getByRole('row', { name: /Tidy up the README/ });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain('admin');
    expect(await row.textContent()).toContain('0 / 1');
    await page.getByRole('link', { name: 'Tidy up the README' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/plans/${plan.id}`);

    // Hostile markdown: shown as text, never run.
    const article = page.locator('article.plan-body');
    expect(await article.textContent()).toContain('<script>window.__pwned = 1</script>');
    expect(await article.textContent()).toContain('<img src=x onerror="window.__pwned=3">');
    expect(await article.locator('script, img, [onerror]').count()).toBe(0);
    expect(await article.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await article.locator('a').getAttribute('href')).toBe('https://example.com/guide');
    expect(await article.locator('a').getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(await pwned(page)).toBeUndefined();
    await article.getByText('[click](javascript:window.__pwned=2)', { exact: false }).click();
    expect(await pwned(page)).toBeUndefined();
    expect(page.url()).toBe(`${d.daemon.url}/ui/plans/${plan.id}`);
    expect(await page.locator('#plan-sha256').textContent()).toBe(plan.sha256);

    // Where the work came from: the job's prompt, as text.
    expect(await page.locator('#source-prompt').textContent()).toBe('Tidy up the README');

    // Approve the text shown: one decision box, a choice and a comment.
    await page.getByLabel('Approve', { exact: true }).check();
    await page.getByLabel(/^Comment/).fill('Looks right.');
    await page.getByRole('button', { name: 'Submit decision' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/plans/${plan.id}?done=approve`);
    expect(await page.getByRole('status').first().textContent()).toContain('Your approval was recorded.');

    // The execute run: its page follows the event log live until the receipt.
    await page.getByRole('link', { name: /^execute run / }).click();
    await page.waitForURL(/\/ui\/runs\/run_/);
    const receipt = page.locator('.ev-receipt');
    await receipt.waitFor({ timeout: 10_000 });
    expect(await receipt.getAttribute('data-status')).toBe('completed');
    expect(await receipt.textContent()).toContain('Run finished: completed');
    expect(await receipt.textContent()).toMatch(/Cost: \$\d+\.\d{4}/);
    const log = page.locator('#run-events');
    expect(await log.textContent()).toContain('Done: NOTES.md is written.');
    expect(await log.locator('.ev-tool').first().textContent()).toContain('→ Write');
    expect(await page.locator('#run-status').textContent()).toBe('completed');
    expect(await page.locator('#run-events-state').textContent()).toBe('The run has finished.');

    // The plan was executed: NOTES.md is committed on the plan's branch.
    const executed = await waitFor(
      async () => {
        const p = (await d.api('GET', `/v1/plans/${plan.id}`)).body;
        return p.status === 'executed' ? p : undefined;
      },
      5_000,
      'the plan to be executed',
    );
    expect(executed.status).toBe('executed');
    expect(git(repo, 'show', `drydock/${plan.id}:NOTES.md`)).toContain('The README is tidy.');

    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(cspViolations).toEqual([]);
    await page.close();
  }, 30_000);
});

/** A signed-in page in a browser context of its own (its own time zone). */
async function signedInPage(o: { timezoneId?: string; locale?: string } = {}): Promise<Page> {
  const context = await browser!.newContext({
    timezoneId: o.timezoneId ?? 'UTC',
    locale: o.locale ?? 'en-US',
  });
  const page = await context.newPage();
  await signInPage(page, d.daemon.url, approverToken);
  return page;
}

/** A pending plan written straight into the daemon's store (its run already planned). */
function seedPending(markdown: string, requestedBy = 'operator-user') {
  const shim = { clock: { now: () => Date.now() }, store: d.daemon.store, workspace: repo };
  return seedPlan(shim as unknown as Harness, { markdown, requestedBy });
}

describe('the approver page in a browser: times, the queue refresh and bulk reject', () => {
  it("shows times in the viewer's zone with the UTC time on hover", async () => {
    const { plan } = await seedPending('# A plan seen from New York\n');
    const page = await signedInPage({ timezoneId: 'America/New_York' });
    await page.goto(`${d.daemon.url}/ui/plans/${plan.id}`);
    const proposed = page.locator('dt:text-is("Proposed") + dd time');
    await expect.poll(() => proposed.getAttribute('data-local')).toBe('1');
    const iso = (await proposed.getAttribute('datetime'))!;
    const utc = `${iso.replace('T', ' ').replace(/\.\d+Z$/, '')} UTC`;
    expect(await proposed.getAttribute('title')).toBe(utc);
    // The same instant, written in New York's time (EST or EDT, 5 or 4 hours behind UTC).
    const text = (await proposed.textContent())!;
    const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d) (EST|EDT)$/.exec(text);
    expect(m, text).not.toBeNull();
    const offset = m![7] === 'EDT' ? 4 : 5;
    const local = Date.UTC(+m![1]!, +m![2]! - 1, +m![3]!, +m![4]! + offset, +m![5]!, +m![6]!);
    expect(local).toBe(Math.floor(Date.parse(iso) / 1000) * 1000);
    await page.context().close();
  });

  it('refreshes the rows without a reload, and never while a comment is half-written', async () => {
    const first = await seedPending('# First queued plan\n');
    const page = await signedInPage();
    await page.clock.install();
    await page.goto(`${d.daemon.url}/ui`);
    await page.evaluate('window.__same_document = true');
    await expect.poll(() => page.locator(`tr[data-plan="${first.plan.id}"]`).count()).toBe(1);

    // Half a comment in the bulk box: the refresh waits, the text stays.
    await page.getByLabel(/Why reject them/).fill('These are supersed');
    const second = await seedPending('# Second queued plan\n');
    await page.clock.runFor(16_000);
    await expect.poll(() => page.locator('#queue-refresh').textContent()).toContain('Auto-refresh paused');
    expect(await page.locator(`tr[data-plan="${second.plan.id}"]`).count()).toBe(0);
    expect(await page.getByLabel(/Why reject them/).inputValue()).toBe('These are supersed');

    // Nothing typed and nothing focused: the next tick brings the new row in, in the same document.
    await page.getByLabel(/Why reject them/).fill('');
    await page.locator('h1').click();
    await page.clock.runFor(16_000);
    await expect.poll(() => page.locator(`tr[data-plan="${second.plan.id}"]`).count()).toBe(1);
    expect(await page.evaluate('window.__same_document')).toBe(true);
    expect(await page.locator('#queue-refresh').textContent()).toMatch(/^Updated \d\d:\d\d:\d\d\.$/);
    // The refreshed rows have their times in the viewer's zone too.
    expect(await page.locator(`tr[data-plan="${second.plan.id}"] time`).getAttribute('data-local')).toBe('1');
    await page.context().close();
  });

  it('bulk rejects every plan selected with "select all" and reports each', async () => {
    const page = await signedInPage();
    await page.goto(`${d.daemon.url}/ui`);
    const boxes = page.locator('#queue-rows input[name="plan"]');
    const n = await boxes.count();
    expect(n).toBeGreaterThanOrEqual(2);
    await page.getByLabel('Select all plans on this page').check();
    for (let i = 0; i < n; i++) expect(await boxes.nth(i).isChecked()).toBe(true);
    await page.getByLabel(/Why reject them/).fill('Superseded by a newer plan.');
    await page.getByRole('button', { name: 'Reject selected plans' }).click();
    await page.waitForURL(/\/ui\/plans\/bulk-reject/);
    expect(await page.locator('#bulk-results-h').textContent()).toBe(
      `Bulk rejection: ${n} rejected, 0 refused`,
    );
    const pending = (await d.api('GET', '/v1/plans?status=pending_approval')).body.items;
    expect(pending).toEqual([]);
    await page.context().close();
  });
});

describe('the Schedules page in a browser', () => {
  it('shows session jobs and scheduled triggers with linked slot outcomes; pause and run now', async () => {
    const seeded = await seedSchedules({
      api: (method, path, body) => d.api(method, path, body),
      store: d.daemon.store,
      now: () => Date.now(),
      workspace: repo,
    });
    const operator = issueToken('olive', 'olive', 'operator', Date.now());
    await d.daemon.store.createToken(operator.record);
    const context = await browser!.newContext({ timezoneId: 'UTC', locale: 'en-US' });
    const page = await context.newPage();
    await signInPage(page, d.daemon.url, operator.token, '/ui/schedules');

    const triggers = page.getByRole('table', { name: 'Scheduled triggers' });
    const jobs = page.getByRole('table', { name: 'Session jobs' });
    const trigger = triggers.getByRole('row', { name: /nightly review/ });
    const job = jobs.getByRole('row', { name: new RegExp(seeded.jobId) });
    // The fired slot and the one coalesced into it both link the run; the run's plan is linked beside them.
    await expect.poll(() => trigger.locator('.slot').allTextContents()).toEqual(['fired', 'coalesced']);
    expect(await trigger.getByRole('link', { name: 'fired' }).getAttribute('href')).toBe(
      `/ui/runs/${seeded.runId}`,
    );
    expect(await trigger.getByRole('link', { name: 'plan' }).first().getAttribute('href')).toBe(
      `/ui/plans/${seeded.planId}`,
    );
    expect(await trigger.locator('.times time').count()).toBe(3);
    expect(await job.locator('.slot').allTextContents()).toEqual(['missed ×3']);
    expect(await job.locator('td').nth(3).textContent()).toBe('active');
    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'schedules.png'), fullPage: true });
    }

    // The run link opens the run, whose page links the plan.
    await trigger.getByRole('link', { name: 'fired' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/runs/${seeded.runId}`);
    expect(await page.getByRole('link', { name: seeded.planId }).count()).toBe(1);
    await page.goBack();

    // Pause the session's job: the page comes back saying so, with Resume in place of Pause.
    await job.getByRole('button', { name: `Pause: ${seeded.jobId}` }).click();
    await page.waitForURL(/\/ui\/schedules\?done=pause/);
    expect(await page.getByRole('status').textContent()).toBe(`Job ${seeded.jobId} paused.`);
    expect(await job.locator('td').nth(3).textContent()).toBe('paused');
    expect(await job.getByRole('button', { name: `Resume: ${seeded.jobId}` }).count()).toBe(1);
    expect((await d.api('GET', `/v1/jobs/${seeded.jobId}`)).body.status).toBe('paused');

    // Run the trigger now: a manual run of its job, linked from the notice.
    model.enqueue({ kind: 'message', content: [{ type: 'text', text: 'Nothing to change.' }] });
    await trigger.getByRole('button', { name: 'Run now: nightly review' }).click();
    await page.waitForURL(/\/ui\/schedules\?done=run/);
    const runs = (await d.api('GET', `/v1/runs?job_id=${seeded.triggerJobId}`)).body.items;
    const manual = runs.find((r: { source: string }) => r.source === 'manual');
    expect(manual?.requested_by).toBe('olive');
    expect(await page.getByRole('status').getByRole('link', { name: manual.id }).getAttribute('href')).toBe(
      `/ui/runs/${manual.id}`,
    );
    expect(await pwned(page)).toBeUndefined();
    await context.close();
  }, 30_000);
});

describe('the usage page in a browser', () => {
  it('draws each day of cost as an accessible SVG bar chart beside the table, without script', async () => {
    const day = 86_400_000;
    const now = Date.now();
    // Runs of two sessions over the last weeks, with receipts, written straight into the daemon's store.
    const sessions = [];
    for (const name of ['nightly-review', 'triage']) {
      sessions.push(
        await d.daemon.store.createSession({
          id: newId('ses'),
          name,
          workspace: repo,
          owner: 'operator-user',
          defaults: {},
          createdAt: now - 30 * day,
        }),
      );
    }
    let total = 0;
    for (let i = 0; i < 24; i++) {
      const session = sessions[i % 3 === 0 ? 1 : 0]!;
      const createdAt = now - (i + 1) * day + 3_600_000;
      const run = await d.daemon.store.createRun({
        id: newId('run'),
        sessionId: session.id,
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt: 'Plan something',
        requestedBy: 'operator-user',
        createdAt,
      });
      await d.daemon.store.transitionRun(run.id, ['queued'], 'planned', {
        startedAt: createdAt,
        finishedAt: createdAt,
      });
      const cost = Math.round((0.4 + ((i * 37) % 11) / 5) * 100) / 100;
      total += cost;
      await d.daemon.store.updateRun(run.id, {
        costUsd: cost,
        usage: { input_tokens: 12_000 + i * 500, output_tokens: 900 + i * 40 },
        model: 'claude-sonnet-4-5',
      });
    }

    const page = await signedInPage();
    const cspViolations: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await page.goto(`${d.daemon.url}/ui/usage`);
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Usage');
    const chart = page.getByRole('img', { name: /^Cost per day, / });
    await expect.poll(() => chart.count()).toBe(1);
    expect(await chart.locator('desc').textContent()).toMatch(/^\d+ runs cost \$[\d.]+ in all/);
    // One bar per day of the default 30, each with its day and cost on hover.
    expect(await chart.locator('rect.chart-bar').count()).toBe(30);
    expect(await chart.locator('rect.chart-bar title').first().textContent()).toMatch(/^\d{4}-\d\d-\d\d: \$/);
    const box = await chart.boundingBox();
    expect(box!.width).toBeGreaterThan(300);
    expect(await page.locator('#usage-table tbody tr').count()).toBeGreaterThanOrEqual(24);
    // The page's total is the API's (the runs of the tests before this one count too).
    const { totals } = (await d.api('GET', '/v1/usage')).body;
    expect(totals.cost_usd).toBeGreaterThanOrEqual(total);
    expect((await page.locator('#usage-total').textContent())!.replace(/\s+/g, ' ')).toContain(
      `$${totals.cost_usd.toFixed(2)} over ${totals.runs} runs`,
    );
    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'usage.png'), fullPage: true });
    }

    // Grouped by model, over a range of its own, from the form.
    await page.getByLabel('By').selectOption('model');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/by=model/);
    expect(await page.locator('#usage-table thead').textContent()).toContain('Model');
    expect(await page.locator('#usage-table tbody th').first().textContent()).toBe('claude-sonnet-4-5');
    expect(cspViolations).toEqual([]);
    await page.context().close();
  });
});
