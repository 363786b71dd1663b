import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import { calls, says } from '../plans/helpers.js';
import { launchChromium, pwned, signInPage } from '../support/chromium.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// An approver's day in a real browser, with no dead end on the way: the queue → a plan gone stale (a commit
// since changed the file it read; no Approve, and why) → Request changes → the revised plan, approved → its
// execution in manual mode, parked on a Write → the plan page links the waiting tool call → the tool call's own
// page (what it would write, the run, the plan, the session) → Allow → the executed plan page, with the
// execution's cost, the delivery and the pull request drydock opened (on the fake GitHub) in its top facts.
// Real daemon, real git (a bare repository as the remote), the scripted model. DRYDOCK_SCREENSHOTS=<dir>
// saves approver-*.png there (docs/screenshots/ in the repository).

const SCREENSHOTS = process.env.DRYDOCK_SCREENSHOTS;
const REPO = 'acme/gadgets';
const GITHUB_TOKEN = 'ghp_DAYtoken0123456789abcdefghijklmnopqrs';
const FIRST_PLAN = ['# Cache the parsed config', '', '1. Memoize `parse` in `src/config.js`.'].join('\n');
const REVISED_PLAN = [
  '# Cache the parsed config',
  '',
  '1. Add `src/cache.js` with a memo of the parsed config, keyed by the text.',
  '2. Leave `src/config.js` as it is now (it changed since round 1).',
].join('\n');
const CACHE_JS = 'export const cache = new Map();\n';

let model: ModelServer;
let github: FakeGithub;
let d: TestDaemon;
let browser: Browser | null = null;
let tmp: { path: string; remove(): void };
let remote: string;
let repo: string;
let approverToken: string;

beforeAll(async () => {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
  tmp = tempDir('drydock-approver-day-');
  remote = join(tmp.path, 'remote.git');
  repo = join(tmp.path, 'repo');
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
  makeRepo(repo, {
    'README.md': '# gadgets\n',
    'src/config.js': 'export const parse = (t) => JSON.parse(t);\n',
  });
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', 'origin', 'main');
  github.linkRepository(REPO, remote);
  d = await startTestDaemon({
    modelUrl: model.url,
    dir: tmp.path,
    patch: (c) => {
      c.github.repositories = { [REPO]: { path: repo } };
      c.github.token = GITHUB_TOKEN;
      c.github.api_url = github.url;
      c.delivery.retry_base_ms = 50;
    },
  });
  // The admin runs the job (and so requested the plans); alice approves.
  const issued = issueToken('alice', 'alice', 'approver', Date.now());
  await d.daemon.store.createToken(issued.record);
  approverToken = issued.token;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  await github?.close();
  await model?.close();
  tmp?.remove();
});

async function shoot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

/** The one pending plan of round `round`, once there is one. */
const pendingPlan = (round: number) =>
  waitFor(
    async () =>
      (await d.api('GET', '/v1/plans?status=pending_approval')).body.items.find(
        (p: { round: number }) => p.round === round,
      ),
    15_000,
    `the pending plan of round ${round}`,
  );

/** Round 1 of the job's plan, then a commit (pushed) that changes the file it read: the plan is stale. */
async function staleFirstRound(): Promise<{ planId: string; jobId: string }> {
  const session = await d.api('POST', '/v1/sessions', {
    name: 'gadgets',
    workspace: repo,
    defaults: { execute_mode: 'manual', deliver: true },
  });
  expect(session.status, JSON.stringify(session.body)).toBe(201);
  const job = await d.api('POST', `/v1/sessions/${session.body.id}/jobs`, {
    cron: '0 9 * * 1',
    name: 'config cache',
    prompt: 'Speed up reading the config',
  });
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  model.enqueue(calls('r1', 'Read', { file_path: 'src/config.js' }), {
    kind: 'message',
    content: [{ type: 'tool_use', id: 'toolu_p1', name: 'ExitPlanMode', input: { plan: FIRST_PLAN } }],
  });
  expect((await d.api('POST', `/v1/jobs/${job.body.id}/run`)).status).toBe(201);
  const plan = await pendingPlan(1);
  // A teammate changes the file the plan read, and pushes it.
  writeFileSync(join(repo, 'src/config.js'), 'export const parse = (t) => JSON.parse(t || "{}");\n');
  git(repo, 'commit', '-q', '-am', 'Parse an empty config as {}');
  git(repo, 'push', '-q', 'origin', 'main');
  return { planId: plan.id, jobId: job.body.id };
}

describe("an approver's day, with no dead end", () => {
  it('stale plan → request changes → approve the revision → the parked tool call → allow → the PR in the top facts', async () => {
    const { planId: staleId, jobId } = await staleFirstRound();
    const page = await browser!.newPage({ viewport: { width: 1100, height: 900 }, timezoneId: 'UTC' });
    const dialogs: string[] = [];
    const csp: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) csp.push(msg.text());
    });
    await signInPage(page, d.daemon.url, approverToken);

    // The queue: the plan, in words, marked stale with why; filters by name.
    const row = page.locator(`tr[data-plan="${staleId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.plan-status .status').textContent()).toBe('waiting for approval');
    expect(await row.locator('.plan-status .status').getAttribute('data-status')).toBe('pending_approval');
    expect(await row.textContent()).toContain('stale: a commit since changed src/config.js');
    expect(await page.locator('#f-session option', { hasText: 'gadgets' }).count()).toBe(1);
    expect(
      await page.locator('#f-job option', { hasText: 'config cache (gadgets)' }).getAttribute('value'),
    ).toBe(jobId);
    await shoot(page, 'approver-queue.png');

    // The stale plan: says so and why; Request changes and Reject, never Approve.
    await row.getByRole('link', { name: 'Cache the parsed config' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/plans/${staleId}`);
    const stale = page.locator('#plan-freshness');
    expect(await stale.textContent()).toContain('Stale: this plan cannot be approved.');
    expect(await stale.textContent()).toContain('src/config.js');
    expect(await stale.textContent()).toContain(`drydock jobs run ${jobId}`);
    expect(await page.locator('#decision-approve').count()).toBe(0);
    expect(await page.locator('#decision-revise').count()).toBe(1);
    expect(await page.locator('#decision-reject').count()).toBe(1);
    await shoot(page, 'approver-stale-plan.png');

    // Request changes: a new round plans on the new head.
    model.enqueue(
      calls('r2', 'Read', { file_path: 'src/config.js' }),
      {
        kind: 'message',
        content: [{ type: 'tool_use', id: 'toolu_p2', name: 'ExitPlanMode', input: { plan: REVISED_PLAN } }],
      },
      // The execution, in manual mode: the Write waits for a person; then a closing reply.
      calls('w1', 'Write', { file_path: 'src/cache.js', content: CACHE_JS }),
      says('Added src/cache.js.'),
    );
    await page.locator('#decision-revise').check();
    await page
      .locator('#decide-comment')
      .fill('src/config.js changed; plan on the new head and leave it alone.');
    await page.getByRole('button', { name: 'Submit decision' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/plans/${staleId}?done=revise`);
    expect(await page.locator('#plan-status').textContent()).toBe('changes requested');
    const revised = await pendingPlan(2);

    // The revision, from the queue: current, Approve offered; approve it.
    await page.goto(`${d.daemon.url}/ui`);
    await page
      .locator(`tr[data-plan="${revised.id}"]`)
      .getByRole('link', { name: 'Cache the parsed config' })
      .click();
    await page.waitForURL(`${d.daemon.url}/ui/plans/${revised.id}`);
    expect(await page.locator('#plan-freshness').count()).toBe(0);
    expect(await page.locator('#plan-diff').textContent()).toContain('src/cache.js');
    await shoot(page, 'approver-revised-plan.png');
    await page.locator('#decision-approve').check();
    await page.getByRole('button', { name: 'Submit decision' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/plans/${revised.id}?done=approve`);

    // The execution parks on the Write: the plan page says what it waits on and links there.
    const approval = await waitFor(
      async () => (await d.api('GET', '/v1/tool-approvals?status=pending')).body.items[0],
      15_000,
      'the pending tool call',
    );
    await page.reload();
    const waiting = page.locator('#plan-waiting a.act');
    expect(await waiting.getAttribute('href')).toBe(`/ui/tool-approvals/${approval.id}`);
    expect(await page.locator('#plan-execution .status').getAttribute('data-status')).toBe('awaiting_input');
    expect(await page.locator('#plan-execution .status').textContent()).toBe('waiting for a person');
    await shoot(page, 'approver-parked-execution.png');
    // The queue's row of the executing plan links it too.
    await page.goto(`${d.daemon.url}/ui?status=executing`);
    const executing = page.locator(`tr[data-plan="${revised.id}"]`);
    expect(await executing.locator('a.act').getAttribute('href')).toBe(`/ui/tool-approvals/${approval.id}`);
    expect(await page.locator('#bulk-form').count()).toBe(0);

    // The tool call's own page: what it would write, the run, the plan, the session; Allow.
    await executing.locator('a.act').click();
    await page.waitForURL(`${d.daemon.url}/ui/tool-approvals/${approval.id}`);
    expect(await page.locator('h1').textContent()).toBe('Tool call Write');
    expect(await page.locator('main').textContent()).toContain('src/cache.js');
    expect(await page.locator('main').textContent()).toContain('export const cache = new Map();');
    expect(await page.locator('#approval-plan').getAttribute('href')).toBe(`/ui/plans/${revised.id}`);
    expect(await page.locator('#approval-run').textContent()).toBe(approval.run_id);
    expect(await page.locator('#approval-facts').textContent()).toContain(repo);
    await shoot(page, 'approver-tool-approval.png');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${d.daemon.url}/ui/tool-approvals/${approval.id}?done=allow`);
    expect(await page.locator('#approval-status').getAttribute('data-status')).toBe('allowed');

    // Executed and delivered: the pull request drydock opened is in the plan's top facts.
    const delivered = await waitFor(
      async () => {
        const p = (await d.api('GET', `/v1/plans/${revised.id}`)).body;
        return p.delivery?.status === 'delivered' || p.delivery?.status === 'failed' ? p : undefined;
      },
      20_000,
      'the delivery',
    );
    expect(delivered.delivery.status, delivered.delivery.last_error).toBe('delivered');
    const opened = github.pullRequests(REPO);
    expect(opened).toHaveLength(1);
    await page.goto(`${d.daemon.url}/ui/plans/${revised.id}`);
    const facts = page.locator('#plan-facts');
    expect(await facts.locator('#plan-status').textContent()).toBe('executed');
    expect(await facts.locator('#plan-pr a').getAttribute('href')).toBe(opened[0]!.html_url);
    expect(await facts.locator('#plan-delivery').getAttribute('data-status')).toBe('delivered');
    expect(await facts.locator('#cost-execution').count()).toBe(1);
    expect(await facts.locator('#cost-all').textContent()).toMatch(/^\$\d+\.\d{4}$/);
    expect(await page.locator('#plan-waiting').count()).toBe(0);
    await shoot(page, 'approver-executed-plan.png');

    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(csp).toEqual([]);
    await page.close();
  }, 90_000);
});
