import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { STATUS_WORDS, statusTag, statusWords } from '../../src/ui/status-words.js';
import { git, makeRepo } from '../support/git-repo.js';
import { createHarness, type Harness } from '../support/harness.js';
import { seedPlan, seedToolApproval, signIn, ui } from './helpers.js';

// No dead ends for an approver: every page that shows something waiting on a person links to where that
// person acts (a tool call's own page, the question's form); questions carry their task; a stale plan of a job
// can be planned again; statuses read as words with the stored value kept; the queue says each plan's status
// and offers bulk rejection only where it applies, its filters by name.

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const XSS = '<script>alert(1)</script>';

/** Nothing hostile became markup: only app.js is a script, no element has a handler. */
function expectInert(page: string) {
  expect(page.match(/<script/g)).toHaveLength(1);
  expect(page).not.toMatch(/<img/i);
  expect(page).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i);
}

/** The seeded plan's run parked (awaiting_input), as an execution waiting on a person is. */
async function parked() {
  const seeded = await seedPlan(h, { markdown: `# Cache ${XSS}\n` });
  expect(await h.store.transitionRun(seeded.run.id, ['planned'], 'awaiting_input')).toBe(true);
  return seeded;
}

describe('status words', () => {
  it('has words for every stored status, and keeps the stored value on the element', () => {
    for (const [kind, words] of Object.entries(STATUS_WORDS)) {
      for (const [status, text] of Object.entries(words)) {
        expect(text, `${kind} ${status}`).not.toMatch(/_/);
        expect(statusWords(kind as keyof typeof STATUS_WORDS, status)).toBe(text);
      }
    }
    expect(statusTag('run', 'awaiting_input').value).toBe(
      '<span class="status" data-status="awaiting_input" title="awaiting_input">waiting for a person</span>',
    );
    expect(statusWords('plan', 'some_new_status')).toBe('some new status');
  });
});

describe('a tool call has a page of its own', () => {
  it('shows the tool, what it would do, the run, the plan and the session, and decides from there', async () => {
    const { plan, run } = await parked();
    const a = await seedToolApproval(h, plan, run, {
      toolUseId: 'toolu_bash',
      tool: 'Bash',
      input: { command: `echo "${XSS}" > x.html` },
    });
    const me = await signIn(h.app, h.tokens.approver);
    const res = await ui(h.app, 'GET', `/ui/tool-approvals/${a.id}`, { cookie: me.cookie });
    expect(res.status).toBe(200);
    const page = res.text;
    expectInert(page);
    expect(page).toContain('<h1>Tool call <code>Bash</code></h1>');
    expect(page).toContain('data-status="pending" title="pending">waiting for a decision</dd>');
    expect(page).toContain(`<a href="/ui/runs/${run.id}" id="approval-run">${run.id}</a>`);
    expect(page).toContain('waiting for a person</span>');
    expect(page).toContain(
      `<a href="/ui/plans/${plan.id}" id="approval-plan">Cache &lt;script&gt;alert(1)&lt;/script&gt;</a>`,
    );
    expect(page).toContain(`nightly-review <span class="muted">(${h.workspace})</span>`);
    expect(page).toContain('echo \\&quot;&lt;script&gt;alert(1)&lt;/script&gt;\\&quot; &gt; x.html');
    expect(page).toContain(`<form method="post" action="/ui/tool-approvals/${a.id}" class="tool">`);
    expect(page).toContain('<input type="hidden" name="from" value="page">');
    expect(page).toContain('value="allow"');

    // The list links each call to its page.
    const list = (await ui(h.app, 'GET', '/ui/tool-approvals', { cookie: me.cookie })).text;
    expect(list).toContain(`<a href="/ui/tool-approvals/${a.id}"><code>Bash</code></a>`);

    // A refusal from the page comes back to the page; a decision too, with its outcome and no form.
    const empty = await ui(h.app, 'POST', `/ui/tool-approvals/${a.id}`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, from: 'page' },
    });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain('<h1>Tool call <code>Bash</code></h1>');
    expect(empty.text).toContain('Choose allow or deny.');
    const denied = await ui(h.app, 'POST', `/ui/tool-approvals/${a.id}`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, from: 'page', decision: 'deny', message: `no ${XSS}` },
    });
    expect(denied.status).toBe(303);
    expect(denied.headers.get('location')).toBe(`/ui/tool-approvals/${a.id}?done=deny`);
    const after = (await ui(h.app, 'GET', `/ui/tool-approvals/${a.id}?done=deny`, { cookie: me.cookie }))
      .text;
    expectInert(after);
    expect(after).toContain('The tool call was denied; the run continues without it.');
    expect(after).toContain('data-status="denied" title="denied">denied by approver-user');
    expect(after).toContain('<dd class="comment">no &lt;script&gt;alert(1)&lt;/script&gt;</dd>');
    expect(after).not.toContain('value="deny"');

    // Unknown: 404 with a way back. A viewer reads it but gets no form; without a session, the sign-in.
    const missing = await ui(h.app, 'GET', '/ui/tool-approvals/tap_nope', { cookie: me.cookie });
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('There is no tool approval tap_nope.');
    const other = await seedToolApproval(h, plan, run, { toolUseId: 'toolu_w', tool: 'Write', input: {} });
    const v = await signIn(h.app, h.tokens.viewer);
    const viewed = (await ui(h.app, 'GET', `/ui/tool-approvals/${other.id}`, { cookie: v.cookie })).text;
    expect(viewed).toContain('Your role (viewer) may read tool calls but not decide them.');
    expect(viewed).not.toContain('<form method="post" action="/ui/tool-approvals/');
    expect((await ui(h.app, 'GET', `/ui/tool-approvals/${other.id}`)).status).toBe(303);
    const forged = await ui(h.app, 'POST', `/ui/tool-approvals/${other.id}`, {
      cookie: me.cookie,
      form: { csrf: 'not-the-token', from: 'page', decision: 'allow' },
    });
    expect(forged.status).toBe(403);
    expect((await h.store.getToolApproval(other.id))!.status).toBe('pending');
  });
});

describe('what waits on a person is linked wherever it shows', () => {
  it('the plan page, the run page and the queue link the pending tool call and the question', async () => {
    const { plan, run } = await parked();
    const a = await seedToolApproval(h, plan, run, { toolUseId: 'toolu_w', tool: 'Write', input: {} });
    const now = h.clock.now();
    const q = await h.store.createQuestion({
      id: newId('qst'),
      runId: run.id,
      sessionId: run.sessionId,
      toolUseId: 'toolu_ask',
      questions: {
        questions: [{ question: 'Which?', header: 'Pick', multiSelect: false, options: [{ label: 'A' }] }],
      },
      priorResults: [],
      createdAt: now,
      expiresAt: now + 3600_000,
    });
    const me = await signIn(h.app, h.tokens.approver);
    const toolLink = `<a class="act" href="/ui/tool-approvals/${a.id}">`;
    const questionLink = `<a class="act" href="/ui/questions#q-${q.id}">`;

    const planPage = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    const waiting = planPage.slice(planPage.indexOf('<dd id="plan-waiting">'));
    expect(waiting).toContain(`${toolLink}Decide the tool call <code>Write</code></a>`);
    expect(waiting).toContain(`${questionLink}Answer the agent's question</a>`);

    const runPage = (await ui(h.app, 'GET', `/ui/runs/${run.id}`, { cookie: me.cookie })).text;
    expect(runPage).toContain(
      '<dd id="run-status" data-status="awaiting_input" title="awaiting_input">waiting for a person</dd>',
    );
    expect(runPage.slice(runPage.indexOf('<dd id="run-waiting-person">'))).toContain(toolLink);

    const queue = (await ui(h.app, 'GET', '/ui', { cookie: me.cookie })).text;
    const row = queue.slice(queue.indexOf(`<tr data-plan="${plan.id}">`));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain(toolLink);

    // The questions page: the question's anchor, and its task (run, plan, session, workspace, prompt).
    const questions = (await ui(h.app, 'GET', '/ui/questions', { cookie: me.cookie })).text;
    expect(questions).toContain(`<section class="question" id="q-${q.id}"`);
    expect(questions).toContain(`<a href="/ui/runs/${run.id}" class="question-run">${run.id}</a>`);
    expect(questions).toContain(
      `while planning <a href="/ui/plans/${plan.id}">Cache &lt;script&gt;alert(1)&lt;/script&gt;</a>`,
    );
    expect(questions).toContain(
      `<dd class="question-session">nightly-review <span class="muted">(${h.workspace})</span></dd>`,
    );
    expect(questions).toContain('aria-labelledby="prompt-h-');
    expect(questions).toContain('>Plan something</pre>');
    expectInert(questions);
  });
});

describe('the queue in any status', () => {
  it('has a Status column in words, bulk rejection only where pending plans list, and filters by name', async () => {
    const pending = await seedPlan(h, { markdown: '# Pending one\n' });
    const rejected = await seedPlan(h, { markdown: '# Rejected one\n' });
    await h.store.transitionPlan(rejected.plan.id, ['pending_approval'], 'rejected');
    const me = await signIn(h.app, h.tokens.approver);
    const cell = (page: string, id: string) => {
      const row = page.slice(page.indexOf(`<tr data-plan="${id}">`));
      return row.slice(0, row.indexOf('</tr>'));
    };

    const any = (await ui(h.app, 'GET', '/ui?status=any', { cookie: me.cookie })).text;
    expect(any).toContain('<th scope="col">Status</th>');
    expect(cell(any, rejected.plan.id)).toContain(
      '<td class="plan-status"><span class="status" data-status="rejected" title="rejected">rejected</span>',
    );
    expect(cell(any, pending.plan.id)).toContain('>waiting for approval</span>');
    expect(any).toContain('id="bulk-form"');
    expect(cell(any, rejected.plan.id)).not.toContain('name="plan"');

    const done = (await ui(h.app, 'GET', '/ui?status=rejected', { cookie: me.cookie })).text;
    expect(done).toContain('<caption>Plans (rejected), oldest first</caption>');
    expect(done).not.toContain('id="bulk-form"');
    expect(done).not.toContain('id="select-all"');
    expect(done).not.toContain('name="plan"');
    const rows = (await ui(h.app, 'GET', '/ui/queue/rows?status=expired', { cookie: me.cookie })).text;
    expect(rows).toContain('<td colspan="9">No plans match these filters.</td>');

    // Filters by name, still sending ids: sessions and jobs in select lists, requesters as suggestions.
    const session = await h.call('POST', '/v1/sessions', {
      body: { name: 'docs-site', workspace: h.workspace },
    });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const job = await h.call('POST', `/v1/sessions/${session.body.id}/jobs`, {
      body: { cron: '0 9 * * *', name: 'weekly tidy', prompt: 'Tidy the docs' },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const page = (await ui(h.app, 'GET', '/ui', { cookie: me.cookie })).text;
    expect(page).toContain(`<option value="${session.body.id}">docs-site</option>`);
    expect(page).toContain(`<option value="${job.body.id}">weekly tidy (docs-site)</option>`);
    expect(page).toContain('<datalist id="f-requesters">');
    expect(page).toContain('<option value="operator-user"></option>');
    const byJob = (await ui(h.app, 'GET', `/ui?job=${job.body.id}`, { cookie: me.cookie })).text;
    expect(byJob).toContain(`<option value="${job.body.id}" selected>weekly tidy (docs-site)</option>`);
    expect(byJob).toContain('No plans match these filters.');
    // An id the lists do not hold still filters, and stays chosen.
    const unknown = (await ui(h.app, 'GET', '/ui?session=ses_gone', { cookie: me.cookie })).text;
    expect(unknown).toContain('<option value="ses_gone" selected>ses_gone</option>');
  });
});

describe('a stale plan of a job', () => {
  it('is planned again from its page by whoever may run jobs: rejected, and the job run anew', async () => {
    const base = makeRepo(h.workspace, { 'README.md': '# r\n' });
    const session = await h.call('POST', '/v1/sessions', { body: { name: 'repo', workspace: h.workspace } });
    const job = await h.call('POST', `/v1/sessions/${session.body.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'Tidy the README' },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const { plan } = await seedPlan(h, {
      workspaceCommit: base,
      footprint: { files: ['README.md'], dirs: [], globs: [] },
      run: { jobId: job.body.id },
    });
    writeFileSync(join(h.workspace, 'README.md'), 'changed\n');
    git(h.workspace, 'commit', '-qam', 'change the README');

    // An approver may not run jobs: the page says who can, and how.
    const approver = await signIn(h.app, h.tokens.approver);
    const seen = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: approver.cookie })).text;
    expect(seen).toContain(`an operator runs its job again: <code>drydock jobs run ${job.body.id}</code>`);
    expect(seen).not.toContain('id="plan-again-form"');
    const refused = await ui(h.app, 'POST', `/ui/plans/${plan.id}/plan-again`, {
      cookie: approver.cookie,
      form: { csrf: approver.csrf },
    });
    expect(refused.status).toBe(403);
    expect((await h.store.getPlan(plan.id))!.status).toBe('pending_approval');

    const operator = await signIn(h.app, h.tokens.operator);
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: operator.cookie })).text;
    expect(page).toContain(`<form method="post" action="/ui/plans/${plan.id}/plan-again"`);
    const res = await ui(h.app, 'POST', `/ui/plans/${plan.id}/plan-again`, {
      cookie: operator.cookie,
      form: { csrf: operator.csrf },
    });
    expect(res.status).toBe(303);
    const runId = decodeURIComponent(res.headers.get('location')!.replace('/ui/runs/', ''));
    expect(await h.store.getRun(runId)).toMatchObject({
      jobId: job.body.id,
      phase: 'plan',
      requestedBy: 'operator-user',
    });
    expect((await h.store.getPlan(plan.id))!.status).toBe('rejected');
    expect(await h.store.listDecisions(plan.id)).toMatchObject([
      { kind: 'reject', identity: 'operator-user', comment: 'Stale: planned again on the current head.' },
    ]);
    // Once decided, there is nothing to plan again from here.
    const again = await ui(h.app, 'POST', `/ui/plans/${plan.id}/plan-again`, {
      cookie: operator.cookie,
      form: { csrf: operator.csrf },
    });
    expect(again.status).toBe(409);
  });
});
