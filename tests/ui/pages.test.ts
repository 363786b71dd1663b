import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { parseSse } from '../support/daemon.js';
import { createHarness, type Harness } from '../support/harness.js';
import { seedPlan, seedToolApproval, signIn, ui } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const HOSTILE = [
  '# Tidy <b>the</b> build',
  '',
  '<script>alert(1)</script>',
  '',
  'See [x](javascript:alert(1)) and [docs](https://example.com/docs).',
  '',
  '<img src=x onerror=alert(1)>',
].join('\n');

/** Every visible form control has an id and a <label for> naming it. */
function expectLabelled(page: string) {
  const controls = [...page.matchAll(/<(input|textarea)\b[^>]*>/g)]
    .map((m) => m[0])
    .filter((t) => !/type="hidden"/.test(t));
  expect(controls.length).toBeGreaterThan(0);
  for (const tag of controls) {
    const id = /\sid="([^"]+)"/.exec(tag)?.[1];
    expect(id, tag).toBeDefined();
    expect(page, tag).toContain(`<label for="${id}">`);
  }
}

describe('the plan page says how the execution would run its commands', () => {
  for (const [sandbox, expected] of [
    [
      { state: 'bwrap', detail: 'commands run in a bubblewrap sandbox' },
      'in the bubblewrap sandbox; no network',
    ],
    [
      { state: 'off', detail: 'off' },
      '<strong class="warning">NOT sandboxed</strong>: execute.sandbox is off',
    ],
    [
      { state: 'unavailable', detail: 'the bubblewrap sandbox does not work here (x)' },
      '<strong class="warning">Bash will refuse to run</strong>: the bubblewrap sandbox does not work here (x)',
    ],
  ] as const) {
    it(`sandbox ${sandbox.state}`, async () => {
      const own = await createHarness({ sandbox });
      try {
        const { plan } = await seedPlan(own);
        const { cookie } = await signIn(own.app, own.tokens.approver);
        const res = await ui(own.app, 'GET', `/ui/plans/${plan.id}`, { cookie });
        expect(res.text).toContain(`<dd id="plan-commands">${expected}`);
      } finally {
        await own.close();
      }
    });
  }
});

describe('the plan page shows the host names the plan lets commands reach', () => {
  it('lists them beside the sandbox', async () => {
    const own = await createHarness({
      sandbox: { state: 'bwrap', detail: 'commands run in a bubblewrap sandbox' },
    });
    try {
      const { plan } = await seedPlan(own, { network: ['*.github.com', 'registry.npmjs.org'] });
      const { cookie } = await signIn(own.app, own.tokens.approver);
      const res = await ui(own.app, 'GET', `/ui/plans/${plan.id}`, { cookie });
      expect(res.text).toContain(
        `<dd id="plan-commands">in the bubblewrap sandbox; network only to <span id="plan-network">*.github.com, registry.npmjs.org</span>, through drydock's egress proxy</dd>`,
      );
    } finally {
      await own.close();
    }
  });
});

describe('the plan queue', () => {
  it('lists pending plans oldest first with session, round, requester, age and approvals', async () => {
    const older = await seedPlan(h, { markdown: '# Older plan\n', createdAt: h.clock.now() - 3 * 3600_000 });
    const newer = await seedPlan(h, { markdown: '# Newer <i>plan</i>\n', requestedBy: 'bob' });
    const { cookie } = await signIn(h.app, h.tokens.approver);
    const res = await ui(h.app, 'GET', '/ui', { cookie });
    expect(res.status).toBe(200);
    const first = res.text.indexOf(older.plan.id);
    const second = res.text.indexOf(newer.plan.id);
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    expect(res.text).toContain(`href="/ui/plans/${older.plan.id}"`);
    expect(res.text).toContain('Newer &lt;i&gt;plan&lt;/i&gt;');
    expect(res.text).toContain('(3 h ago)');
    expect(res.text).toContain('<td>bob</td>');
    expect(res.text).toContain('<td>0 / 1</td>');
    expect(res.text).toContain('0 pending questions');
    expect(res.text).toContain('0 pending tool approvals');
  });
});

describe('the plan page', () => {
  it('renders hostile markdown inert and shows sha256, status, decisions and runs', async () => {
    const { plan, run } = await seedPlan(h, { markdown: HOSTILE });
    const { cookie } = await signIn(h.app, h.tokens.approver);
    const res = await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const body = res.text;
    const article = body.slice(body.indexOf('<article'), body.indexOf('</article>'));
    expect(article).not.toMatch(/<script/i);
    expect(article).not.toMatch(/href="javascript:/i);
    expect(article).not.toMatch(/<img/i);
    expect(body).not.toMatch(/<[a-z][^>]*\sonerror=/i);
    expect(article).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(article).toContain(
      '<a href="https://example.com/docs" rel="noopener noreferrer nofollow">docs</a>',
    );
    // The only <script> of the page is app.js.
    expect(body.match(/<script/g)).toHaveLength(1);
    expect(body).toContain('<title>Tidy &lt;b&gt;the&lt;/b&gt; build · drydock</title>');
    expect(body).toContain(`<code id="plan-sha256">${plan.sha256}</code>`);
    expect(body).toContain(`name="sha256" value="${plan.sha256}"`);
    expect(body).toContain(
      '<dd id="plan-status" data-status="pending_approval" title="pending_approval">waiting for approval</dd>',
    );
    expect(body).toContain(`href="/ui/runs/${run.id}"`);
    // One decision box: a comment and a choice, posted to one endpoint.
    expect(body).toContain(`action="/ui/plans/${plan.id}/decide"`);
    expect(body.match(/<form method="post" action="\/ui\/plans\//g)).toHaveLength(1);
    for (const kind of ['approve', 'revise', 'reject'])
      expect(body).toContain(`id="decision-${kind}" value="${kind}" required>`);
    expectLabelled(body);
    // Only known notices are shown; anything else in ?done= prints nothing.
    const odd = await ui(h.app, 'GET', `/ui/plans/${plan.id}?done=constructor`, { cookie });
    expect(odd.text).not.toContain('role="status"><p>');
  });

  it('approves through PlanDecisions with the shown sha256; refusals are shown on the page', async () => {
    const { plan } = await seedPlan(h, { requestedBy: 'approver-user' });
    const self = await signIn(h.app, h.tokens.approver);
    const path = `/ui/plans/${plan.id}/approve`;

    // The requester may not approve their own plan: 403 on the page, typed comment kept.
    const refused = await ui(h.app, 'POST', path, {
      cookie: self.cookie,
      form: { csrf: self.csrf, sha256: plan.sha256, comment: 'mine <b>' },
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('role="alert"');
    expect(refused.text).toContain('cannot approve it');
    expect(refused.text).toContain('mine &lt;b&gt;</textarea>');

    const other = await signIn(h.app, h.tokens.operator);
    // A different text than the one shown: 409.
    const stale = await ui(h.app, 'POST', path, {
      cookie: other.cookie,
      form: { csrf: other.csrf, sha256: 'f'.repeat(64) },
    });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('not the text you saw');
    // No sha256 at all: 422, nothing recorded.
    const none = await ui(h.app, 'POST', path, { cookie: other.cookie, form: { csrf: other.csrf } });
    expect(none.status).toBe(422);
    expect(await h.store.listDecisions(plan.id)).toHaveLength(0);

    const ok = await ui(h.app, 'POST', path, {
      cookie: other.cookie,
      form: { csrf: other.csrf, sha256: plan.sha256, comment: 'ship it' },
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/ui/plans/${plan.id}?done=approve`);
    const decisions = await h.store.listDecisions(plan.id);
    expect(decisions).toMatchObject([
      { kind: 'approve', identity: 'operator-user', comment: 'ship it', sha256: plan.sha256 },
    ]);
    const after = await ui(h.app, 'GET', ok.headers.get('location')!, { cookie: other.cookie });
    expect(after.text).toContain('Your approval was recorded.');
    expect(after.text).not.toContain(`action="/ui/plans/${plan.id}/decide"`);
    expect(after.text).toContain('This plan is approved: it can no longer be decided.');
    const exec = (await h.store.listPlanRuns((await h.store.getPlan(plan.id))!)).find(
      (r) => r.phase === 'execute',
    );
    expect(exec).toBeDefined();
    expect(after.text).toContain(`href="/ui/runs/${exec!.id}"`);

    // Deciding again: 409 shown, not a crash.
    const again = await ui(h.app, 'POST', `/ui/plans/${plan.id}/reject`, {
      cookie: other.cookie,
      form: { csrf: other.csrf, comment: 'too late' },
    });
    expect(again.status).toBe(409);
    expect(again.text).toContain('no longer pending approval');
  });

  it('requires a comment to reject and feedback to revise; an expired plan answers 410', async () => {
    const { plan } = await seedPlan(h);
    const me = await signIn(h.app, h.tokens.approver);
    const reject = await ui(h.app, 'POST', `/ui/plans/${plan.id}/reject`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, comment: '   ' },
    });
    expect(reject.status).toBe(422);
    expect(reject.text).toContain('A rejection needs a comment.');
    const revise = await ui(h.app, 'POST', `/ui/plans/${plan.id}/revise`, {
      cookie: me.cookie,
      form: { csrf: me.csrf },
    });
    expect(revise.status).toBe(422);
    expect(revise.text).toContain('A revision needs feedback.');

    const revised = await ui(h.app, 'POST', `/ui/plans/${plan.id}/revise`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, feedback: 'Use a cursor instead', sha256: plan.sha256 },
    });
    expect(revised.status).toBe(303);
    expect((await h.store.getPlan(plan.id))!.status).toBe('revision_requested');

    const late = await seedPlan(h);
    h.clock.advance(86_400_000 + 1);
    const s = await signIn(h.app, h.tokens.approver);
    const expired = await ui(h.app, 'POST', `/ui/plans/${late.plan.id}/approve`, {
      cookie: s.cookie,
      form: { csrf: s.csrf, sha256: late.plan.sha256 },
    });
    expect(expired.status).toBe(410);
    expect(expired.text).toContain('expired');
  });

  it('a viewer sees the plan but no forms, and a forged decision is refused with 403', async () => {
    const { plan } = await seedPlan(h);
    const v = await signIn(h.app, h.tokens.viewer);
    const page = await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: v.cookie });
    expect(page.text).toContain('may read plans but not decide them');
    expect(page.text).not.toContain('/approve"');
    const res = await ui(h.app, 'POST', `/ui/plans/${plan.id}/approve`, {
      cookie: v.cookie,
      form: { csrf: v.csrf, sha256: plan.sha256 },
    });
    expect(res.status).toBe(403);
    expect(await h.store.listDecisions(plan.id)).toHaveLength(0);
  });
});

describe('questions and tool approvals', () => {
  it('answers a pending question (radio and checkbox) through RunService', async () => {
    const { run } = await seedPlan(h);
    const now = h.clock.now();
    const q = await h.store.createQuestion({
      id: newId('qst'),
      runId: run.id,
      sessionId: run.sessionId,
      toolUseId: 'toolu_ask',
      questions: {
        questions: [
          {
            question: 'Which <style>?',
            header: 'Style',
            multiSelect: false,
            options: [
              { label: 'Offset', description: 'limit & offset' },
              { label: 'Cursor', description: 'opaque' },
            ],
          },
          {
            question: 'Which tables?',
            header: 'Tables',
            multiSelect: true,
            options: [
              { label: 'users', description: '' },
              { label: 'orders', description: '' },
            ],
          },
        ],
      },
      priorResults: [],
      createdAt: now,
      expiresAt: now + 3600_000,
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = await ui(h.app, 'GET', '/ui/questions', { cookie: me.cookie });
    expect(page.text).toContain('Which &lt;style&gt;?');
    expect(page.text).toContain('type="radio"');
    expect(page.text).toContain('type="checkbox"');
    expect(page.text).toContain('limit &amp; offset');
    expectLabelled(page.text);
    const queue = await ui(h.app, 'GET', '/ui', { cookie: me.cookie });
    expect(queue.text).toContain('1 pending question<');

    const path = `/ui/questions/${q.id}/answer`;
    const invalid = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, q0: 'Cursor' },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.text).toContain('role="alert"');
    expect(invalid.text).toContain('question &quot;Which tables?&quot; is not answered');
    const ok = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, q0: 'Cursor', q1: ['users', 'orders'] },
    });
    expect(ok.status).toBe(303);
    const answered = (await h.store.getQuestion(q.id))!;
    expect(answered).toMatchObject({
      status: 'answered',
      answeredBy: 'approver-user',
      answers: { 'Which <style>?': 'Cursor', 'Which tables?': ['users', 'orders'] },
    });
    const again = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, q0: 'Offset', q1: 'users' },
    });
    expect(again.status).toBe(409);
  });

  it("takes answers in the person's own words, cuts long headers and shows option previews", async () => {
    const { run } = await seedPlan(h);
    const now = h.clock.now();
    const seed = () =>
      h.store.createQuestion({
        id: newId('qst'),
        runId: run.id,
        sessionId: run.sessionId,
        toolUseId: `toolu_${newId('qst')}`,
        questions: {
          questions: [
            {
              question: 'Which pagination?',
              header: 'Pagination style',
              multiSelect: false,
              options: [
                { label: 'Offset', description: 'limit & offset', preview: 'GET /users?offset=<b>20</b>' },
                { label: 'Cursor', description: 'opaque' },
              ],
            },
            {
              question: 'Which tables?',
              header: 'Tables',
              multiSelect: true,
              options: [
                { label: 'users', description: '' },
                { label: 'orders', description: '' },
              ],
            },
          ],
        },
        priorResults: [],
        createdAt: now,
        expiresAt: now + 3600_000,
      });
    const q = await seed();
    const me = await signIn(h.app, h.tokens.approver);
    const page = await ui(h.app, 'GET', '/ui/questions', { cookie: me.cookie });
    // The header is cut to 12 characters where shown; the whole of it is in the tooltip.
    expect(page.text).toContain('<strong title="Pagination style">Pagination s…:</strong>');
    expect(page.text).toContain('<strong>Tables:</strong>');
    expect(page.text).toContain('<pre class="preview">GET /users?offset=&lt;b&gt;20&lt;/b&gt;</pre>');
    expect(page.text).toContain(`name="q0" value=""`);
    expect(page.text).toContain('name="q0-other"');
    expect(page.text).toContain('name="q1-other"');
    expectLabelled(page.text);

    const path = `/ui/questions/${q.id}/answer`;
    // An option and an own answer to one single-choice question: refused, not guessed at.
    const both = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, q0: 'Offset', 'q0-other': 'Keyset', q1: 'users' },
    });
    expect(both.status).toBe(422);
    expect(both.text).toContain('choose one of the options or write your own answer (with Other), not both');
    expect((await h.store.getQuestion(q.id))?.status).toBe('pending');

    // "Other" with a text of one's own, and an own text beside a ticked option.
    const ok = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: {
        csrf: me.csrf,
        q0: '',
        'q0-other': ' Keyset on created_at ',
        q1: 'users',
        'q1-other': 'audit_log',
      },
    });
    expect(ok.status).toBe(303);
    expect(await h.store.getQuestion(q.id)).toMatchObject({
      status: 'answered',
      answers: { 'Which pagination?': 'Keyset on created_at', 'Which tables?': ['users', 'audit_log'] },
    });

    // An own text without ticking Other counts too, and the stored header is whole.
    const q2 = await seed();
    expect((q2.questions as any).questions[0].header).toBe('Pagination style');
    const typed = await ui(h.app, 'POST', `/ui/questions/${q2.id}/answer`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, 'q0-other': 'Keyset', 'q1-other': 'everything' },
    });
    expect(typed.status).toBe(303);
    expect((await h.store.getQuestion(q2.id))?.answers).toEqual({
      'Which pagination?': 'Keyset',
      'Which tables?': ['everything'],
    });
  });

  it('shows a pending tool call escaped and denies it with a message', async () => {
    const { plan, run } = await seedPlan(h);
    const a = await seedToolApproval(h, plan, run, {
      toolUseId: 'toolu_bash',
      tool: 'Bash',
      input: { command: 'echo "<script>alert(1)</script>" > x.html' },
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = await ui(h.app, 'GET', '/ui/tool-approvals', { cookie: me.cookie });
    expect(page.text).toContain('<code>Bash</code>');
    expect(page.text).toContain(
      '&quot;command&quot;: &quot;echo \\&quot;&lt;script&gt;alert(1)&lt;/script&gt;\\&quot; &gt; x.html&quot;',
    );
    expect(page.text).not.toContain('<script>alert');
    expectLabelled(page.text);
    const res = await ui(h.app, 'POST', `/ui/tool-approvals/${a.id}`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'deny', message: 'no html files please' },
    });
    expect(res.status).toBe(303);
    expect(await h.store.getToolApproval(a.id)).toMatchObject({
      status: 'denied',
      decidedBy: 'approver-user',
      message: 'no html files please',
    });
    const again = await ui(h.app, 'POST', `/ui/tool-approvals/${a.id}`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'allow' },
    });
    expect(again.status).toBe(409);
  });
});

describe('tool approvals of your own plan', () => {
  it('offer the requester Deny only, and refuse a forged Allow with 403', async () => {
    const { plan, run } = await seedPlan(h, { requestedBy: 'approver-user' });
    const a = await seedToolApproval(h, plan, run, {
      toolUseId: 'toolu_write',
      tool: 'Write',
      input: { file_path: 'a.txt', content: 'A' },
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = await ui(h.app, 'GET', '/ui/tool-approvals', { cookie: me.cookie });
    expect(page.text).not.toContain('value="allow"');
    expect(page.text).toContain('value="deny"');
    expect(page.text).toContain('you may deny its tool calls but not allow them');
    const forged = await ui(h.app, 'POST', `/ui/tool-approvals/${a.id}`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'allow' },
    });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('cannot allow its tool calls');
    expect((await h.store.getToolApproval(a.id))!.status).toBe('pending');
    const other = await signIn(h.app, h.tokens.admin);
    const theirs = await ui(h.app, 'GET', '/ui/tool-approvals', { cookie: other.cookie });
    expect(theirs.text).toContain('value="allow"');
  });
});

describe('the run page', () => {
  it('shows the run and streams its stored events over the cookie-authenticated SSE endpoint', async () => {
    const { run } = await seedPlan(h);
    await h.store.updateRun(run.id, {
      turns: 2,
      costUsd: 0.0123,
      usage: { input_tokens: 10, output_tokens: 5 },
    });
    const now = h.clock.now();
    await h.store.appendEvent(run.id, 'run_started', { phase: 'plan' }, now);
    await h.store.appendEvent(run.id, 'text_delta', { text: '<b>hi</b>' }, now);
    await h.store.appendEvent(run.id, 'run_finished', { status: 'planned', turns: 2, cost_usd: 0.0123 }, now);
    const me = await signIn(h.app, h.tokens.viewer);
    const page = await ui(h.app, 'GET', `/ui/runs/${run.id}`, { cookie: me.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      '<dd id="run-status" data-status="planned" title="planned">plan proposed</dd>',
    );
    expect(page.text).toContain('$0.0123');
    expect(page.text).toContain(`data-events-url="/ui/runs/${run.id}/events"`);

    const res = await h.app.request(`http://localhost/ui/runs/${run.id}/events`, {
      headers: { cookie: me.cookie, accept: 'text/event-stream' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('content-security-policy')).toBeTruthy();
    const events = parseSse(await res.text());
    expect(events.map((e) => e.data.type)).toEqual(['run_started', 'text_delta', 'run_finished']);
    expect(events.map((e) => e.id)).toEqual(['1', '2', '3']);
    expect(events[1]!.data.text).toBe('<b>hi</b>');

    const tail = await h.app.request(`http://localhost/ui/runs/${run.id}/events`, {
      headers: { cookie: me.cookie, 'last-event-id': '2' },
    });
    expect(parseSse(await tail.text()).map((e) => e.id)).toEqual(['3']);
    expect((await ui(h.app, 'GET', '/ui/runs/run_missing', { cookie: me.cookie })).status).toBe(404);
  });
});
