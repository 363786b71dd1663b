import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import { launchChromium, pwned, signInPage } from '../support/chromium.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// A real daemon, git repository, scripted model and Debian's chromium: an execute run's page shows its
// events as a timeline and, once it ended, the diff it committed. The model's text and tool input are
// hostile: none of it may run in the page.

const HOSTILE_FILE = '"><img src=x onerror="window.__pwned=2">.md';

let model: ModelServer;
let d: TestDaemon;
let browser: Browser | null = null;
let approverToken: string;

beforeAll(async () => {
  model = await startModelServer();
  d = await startTestDaemon({ modelUrl: model.url });
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

describe('the execute run page in a browser', () => {
  it('shows the events as a timeline with JSON one click away, then the diff, all inert', async () => {
    model.enqueue(
      {
        kind: 'message',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_plan',
            name: 'ExitPlanMode',
            input: { plan: '# Add notes\n\n1. Write notes.\n' },
          },
        ],
      },
      {
        kind: 'message',
        content: [
          // Text before a tool call comes back as thinking from this model (see the stand-in).
          { type: 'text', text: 'Writing the notes.' },
          {
            type: 'tool_use',
            id: 'toolu_write',
            name: 'Write',
            input: { file_path: HOSTILE_FILE, content: '<script>window.__pwned=3</script>\n</td></tr>\n' },
          },
        ],
      },
      { kind: 'message', content: [{ type: 'text', text: 'Done <img src=x onerror="window.__pwned=1">.' }] },
    );
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'README.md': '# demo\n' });
    const session = await d.api('POST', '/v1/sessions', {
      workspace: repo,
      defaults: { execute_mode: 'edits' },
    });
    expect(session.status).toBe(201);
    const job = await d.api('POST', `/v1/sessions/${session.body.id}/jobs`, {
      cron: '0 9 * * *',
      prompt: 'Add notes',
    });
    expect((await d.api('POST', `/v1/jobs/${job.body.id}/run`)).status).toBe(201);
    const plan = await waitFor(
      async () => (await d.api('GET', '/v1/plans?status=pending_approval')).body.items[0],
      10_000,
      'a pending plan',
    );
    const approved = await d.api(
      'POST',
      `/v1/plans/${plan.id}/approve`,
      { sha256: plan.sha256 },
      approverToken,
    );
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const runId = approved.body.run.id as string;

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
    await signInPage(page, d.daemon.url, approverToken, `/ui/runs/${runId}`);

    const log = page.locator('#run-events');
    await log.locator('.ev-receipt').waitFor({ timeout: 10_000 });
    expect(await log.locator('.ev-receipt').getAttribute('data-status')).toBe('completed');

    // One readable entry per step, each with its time.
    const started = log.locator('.ev-run').first();
    expect(await started.textContent()).toContain('Run started: execute phase');
    const text = log.locator('.ev-text').first();
    expect(await text.locator('.ev-prose').textContent()).toBe(
      'Done <img src=x onerror="window.__pwned=1">.',
    );
    expect(await log.locator('.ev-thinking .ev-label').first().textContent()).toBe('Thinking');
    const tool = log.locator('.ev-tool');
    expect(await tool.count()).toBe(1);
    expect(await tool.locator('.ev-line').textContent()).toBe(`→ Write ${HOSTILE_FILE}`);
    expect(await tool.locator('.ev-result').textContent()).toMatch(/← ok, \d+ chars/);
    expect(await tool.getAttribute('class')).toContain('ev-ok');
    expect(await log.locator('.ev-execution').textContent()).toMatch(
      /Execution recorded: commit [0-9a-f]{12} on drydock\/pln_/,
    );
    expect(await log.locator('.ev-turn').count()).toBe(2);
    for (const entry of await log.locator('li.ev').all()) {
      expect(await entry.locator('time.ev-time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    }

    // The JSON of the tool call (call and result) is one click away.
    const raw = tool.locator('details.ev-raw');
    expect(await raw.getAttribute('open')).toBeNull();
    await raw.locator('summary').click();
    // The JSON is written when the toggle event fires, which follows the click asynchronously.
    await expect.poll(async () => (await raw.locator('pre').textContent()) ?? '').not.toBe('');
    const json = JSON.parse((await raw.locator('pre').textContent()) ?? 'null');
    expect(json.map((e: { type: string }) => e.type)).toEqual(['tool_use', 'tool_result']);
    expect(json[0].input.file_path).toBe(HOSTILE_FILE);

    // Hostile text stayed text: no element was made from it.
    expect(await page.locator('#run-events img, #run-events script').count()).toBe(0);

    // Once it ended, the page shows the committed diff (server-rendered).
    await page.reload();
    const file = page.locator('.execution .diff-file');
    expect(await file.count()).toBe(1);
    expect(await file.locator('.diff-head code').textContent()).toBe(HOSTILE_FILE);
    expect(await file.locator('.diff-add .diff-code').first().textContent()).toBe(
      '<script>window.__pwned=3</script>',
    );
    expect(await page.locator('main img, main script').count()).toBe(0);
    await log.locator('.ev-receipt').waitFor({ timeout: 10_000 });

    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(cspViolations).toEqual([]);
    await page.close();
  }, 40_000);
});
