import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import { renderPrompt } from '../../src/triggers/template.js';
import { git, makeRepo } from '../support/git-repo.js';
import { createHarness, type Harness, T0 } from '../support/harness.js';
import { seedPlan, sha256, signIn, ui } from './helpers.js';

// The approver's plan page (context, diff, decision box) and the queue (source, filters, marks, bulk
// reject), server-rendered through app.request. Hostile text is everywhere a person or a model could put it.

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const XSS = '<script>alert(1)</script>';
const ATTR = '"><img src=x onerror=alert(1)>';

/** Nothing from the seeded hostile texts became markup: only app.js is a script, no element has a handler. */
function expectInert(page: string) {
  expect(page.match(/<script/g)).toHaveLength(1);
  expect(page).not.toMatch(/<img/i);
  expect(page).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i);
  expect(page).not.toMatch(/href="\s*javascript:/i);
}

/** Every visible form control has an id and a <label for> naming it. */
function expectLabelled(page: string) {
  const controls = [...page.matchAll(/<(input|textarea|select)\b[^>]*>/g)]
    .map((m) => m[0])
    .filter((t) => !/type="hidden"/.test(t));
  expect(controls.length).toBeGreaterThan(0);
  for (const tag of controls) {
    const id = /\sid="([^"]+)"/.exec(tag)?.[1];
    expect(id, tag).toBeDefined();
    expect(page, tag).toContain(`<label for="${id}">`);
  }
}

/** A pull request trigger, its delivery and a planned run of it; `url` is what the payload said. */
async function seedPullRequest(o: { title: string; url: string; author?: string; requestedBy?: string }) {
  const now = h.clock.now();
  const trigger = await h.store.createTrigger({
    id: newId('trg'),
    name: `pr-review ${ATTR}`,
    kind: 'github',
    events: ['pull_request.opened'],
    filters: {},
    prompt: 'Review {{repository}}#{{number}}',
    workspace: null,
    options: {},
    hourlyCap: 10,
    limits: {},
    tokenId: null,
    tokenHash: null,
    enabled: true,
    createdBy: 'admin-user',
    createdAt: now,
    updatedAt: now,
  });
  const key = randomUUID();
  const { delivery } = await h.store.recordWebhookDelivery({
    id: newId('dlv'),
    source: 'github',
    key,
    event: 'pull_request.opened',
    triggerId: trigger.id,
    outcome: 'accepted',
    detail: null,
    subject: 'octo/repo#7',
    runIds: [],
    receivedAt: now - 60_000,
    processedAt: now - 59_000,
  });
  const headSha = 'b'.repeat(40);
  const prompt = renderPrompt(
    trigger.prompt,
    {
      kind: 'pull_request',
      event: 'pull_request.opened',
      repository: 'octo/repo',
      number: 7,
      headSha,
      headRef: 'feature/x',
      baseRef: 'main',
      baseSha: null,
      headRepository: 'octo/repo',
      draft: false,
      labels: [`bug ${XSS}`],
      author: o.author ?? 'mallory',
      url: o.url,
      title: o.title,
      body: `body ${XSS}`,
    },
    trigger.name,
  );
  const seeded = await seedPlan(h, {
    requestedBy: o.requestedBy ?? 'github:mallory',
    subject: 'octo/repo#7',
    run: {
      source: 'delivery',
      prompt,
      triggerId: trigger.id,
      deliveryId: delivery.id,
      subject: 'octo/repo#7',
      checkout: {
        repository: 'octo/repo',
        clone: h.workspace,
        headSha,
        headRef: 'feature/x',
        baseRef: 'main',
        number: 7,
      },
    },
  });
  return { ...seeded, trigger, delivery, headSha, key };
}

/** Round 2 of `first`: revised over the API with `feedback`, proposed as `markdown`. */
async function seedRound2(first: Plan, feedback: string, markdown: string): Promise<Plan> {
  const r = await h.call('POST', `/v1/plans/${first.id}/revise`, { role: 'approver', body: { feedback } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const runId = r.body.run.id as string;
  const now = h.clock.now();
  await h.store.transitionRun(runId, ['queued'], 'planned', { startedAt: now, finishedAt: now });
  await h.store.updateRun(runId, {
    turns: 2,
    costUsd: 0.02,
    usage: { input_tokens: 200, output_tokens: 20 },
  });
  const plan = await h.store.createPlan({
    ...first,
    id: newId('pln'),
    runId,
    toolUseId: 'toolu_plan2',
    markdown,
    sha256: sha256(markdown),
    status: 'pending_approval',
    round: 2,
    previousPlanId: first.id,
    createdAt: now,
    decidedAt: null,
  });
  await h.store.updateRun(runId, { planId: plan.id });
  return plan;
}

describe('the plan page shows what an approver needs', () => {
  it('the prompt, files read, questions and answers, cost and times, all hostile text inert', async () => {
    const { plan, run } = await seedPlan(h, { run: { prompt: `Tidy up ${XSS} ${ATTR}` } });
    await h.store.updateRun(run.id, {
      turns: 3,
      costUsd: 0.0123,
      model: 'claude-sonnet-5-5',
      usage: { input_tokens: 100, output_tokens: 50, cache_read_tokens: 900 },
    });
    await h.store.appendMessages(
      plan.conversationId,
      run.id,
      [
        { role: 'user', content: [{ type: 'text', text: 'Tidy up' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: `docs/${XSS}.md` } },
            { type: 'tool_use', id: 't2', name: 'Grep', input: { pattern: ATTR, glob: '*.ts' } },
            { type: 'tool_use', id: 't3', name: 'Glob', input: { pattern: 'javascript:alert(1)' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', is_error: true, content: 'no such file' },
            { type: 'tool_result', tool_use_id: 't2', content: 'x' },
            { type: 'tool_result', tool_use_id: 't3', content: 'y' },
          ],
        },
      ],
      h.clock.now(),
    );
    const now = h.clock.now();
    const q = await h.store.createQuestion({
      id: newId('qst'),
      runId: run.id,
      sessionId: run.sessionId,
      toolUseId: 'toolu_ask',
      questions: {
        questions: [
          {
            question: `Which ${XSS}?`,
            header: `H${ATTR}`,
            multiSelect: false,
            options: [
              { label: `A ${ATTR}`, description: '' },
              { label: 'B', description: '' },
            ],
          },
        ],
      },
      priorResults: [],
      createdAt: now,
      expiresAt: now + 3600_000,
    });
    await h.store.answerQuestion(q.id, { [`Which ${XSS}?`]: `mine ${XSS}` }, 'approver-user', now);

    const me = await signIn(h.app, h.tokens.approver);
    const res = await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie });
    expect(res.status).toBe(200);
    const page = res.text;
    expectInert(page);
    expectLabelled(page);
    expect(page).toContain('<dd>a run started by hand; requested by operator-user</dd>');
    expect(page).toContain(
      '<pre class="prompt" id="source-prompt" aria-labelledby="prompt-h">Tidy up &lt;script&gt;alert(1)&lt;/script&gt; &quot;&gt;&lt;img src=x onerror=alert(1)&gt;</pre>',
    );
    // Files: the path and patterns as text; the failed Read is marked.
    expect(page).toContain(
      '<td>Read</td><td><code>docs/&lt;script&gt;alert(1)&lt;/script&gt;.md</code></td>',
    );
    expect(page).toContain('<span class="warning">(1 failed)</span>');
    expect(page).toContain('<code>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</code> in <code>*.ts</code>');
    expect(page).toContain('<code>javascript:alert(1)</code>');
    // The question, its options and the answer, escaped.
    expect(page).toContain('<span class="question">Which &lt;script&gt;alert(1)&lt;/script&gt;?</span>');
    expect(page).toContain('Options: A &quot;&gt;&lt;img src=x onerror=alert(1)&gt; · B');
    expect(page).toContain('<strong class="answer">mine &lt;script&gt;alert(1)&lt;/script&gt;</strong>');
    expect(page).toContain('answered by approver-user');
    // Cost and tokens of the planning run.
    expect(page).toContain(
      '<td>claude-sonnet-5-5</td><td>3</td><td>100 in, 50 out, 900 cache read, 0 cache write</td><td>$0.0123</td>',
    );
    expect(page).toContain('<td id="cost-total">$0.0123</td>');
    // Times in UTC, with the UTC text kept for the hover title (app.js rewrites the text).
    const iso = new Date(T0).toISOString();
    expect(page).toContain(
      `<time datetime="${iso}" title="2026-06-01 08:00:00 UTC">2026-06-01 08:00:00 UTC</time>`,
    );
    // Round 1: no rounds list, no diff.
    expect(page).not.toContain('id="plan-diff"');
  });

  it('project memory: which file, from where, its size and whether it was cut, folded, its text inert', async () => {
    const { plan, run } = await seedPlan(h, {});
    const me = await signIn(h.app, h.tokens.approver);
    const before = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    // A conversation from before frames were stored: said so, nothing invented.
    expect(before).toContain('<h2 id="memory">Project memory</h2>');
    expect(before).toMatch(/id="memory-none">Not recorded for this conversation/);

    const text = `The project's instructions file (CLAUDE.md) follows.\n\n<project_instructions file="CLAUDE.md">\nUse tabs ${XSS} ${ATTR}\n</project_instructions>`;
    await h.store.saveFrame(
      plan.conversationId,
      run.id,
      {
        system: ['base', 'plan mode', text],
        tools: [],
        memory: {
          files: ['CLAUDE.md', '.claude/CLAUDE.md'],
          from: { kind: 'commit', commit: 'c'.repeat(40) },
          sha256: sha256(text),
          bytes: 70_123,
          cut: true,
        },
      },
      h.clock.now(),
    );
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expectInert(page);
    expect(page).toContain('<details id="memory-details">');
    expect(page).not.toContain('<details id="memory-details" open');
    expect(page).toContain('<span id="memory-files">CLAUDE.md, .claude/CLAUDE.md</span>');
    expect(page).toContain(`from commit <code>${'c'.repeat(40)}</code>`);
    expect(page).toContain('<span id="memory-size">70123 bytes</span>');
    expect(page).toContain('<span class="warning" id="memory-cut">cut to runs.memory_max_bytes</span>');
    expect(page).toContain(`<code id="memory-sha256">${sha256(text)}</code>`);
    expect(page).toContain(
      'Use tabs &lt;script&gt;alert(1)&lt;/script&gt; &quot;&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
  });

  it('project memory: a conversation framed without any memory file says the model had none', async () => {
    const { plan, run } = await seedPlan(h, {});
    await h.store.saveFrame(plan.conversationId, run.id, { system: ['base', 'plan mode'], tools: [] }, T0);
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expect(page).toMatch(/id="memory-none">No CLAUDE.md, .claude\/CLAUDE.md or AGENTS.md was read/);
    expect(page).not.toContain('id="memory-details"');
  });

  it('round 2 lists the rounds with the feedback and marks added and removed lines, not by colour alone', async () => {
    const first = await seedPlan(h, { markdown: '# Add a cache\n\n1. Add an LRU.\n2. Test it.\n' });
    const second = await seedRound2(
      first.plan,
      `Use a TTL ${XSS}`,
      `# Add a cache\n\n1. Add an LRU with a TTL ${XSS}.\n2. Test it.\n`,
    );
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', `/ui/plans/${second.id}`, { cookie: me.cookie })).text;
    expectInert(page);
    expect(page).toContain(
      `<a href="/ui/plans/${first.plan.id}">round 1</a>: <span class="status" data-status="revision_requested" title="revision_requested">changes requested</span>`,
    );
    expect(page).toContain('approver-user asked for changes');
    expect(page).toContain('<q class="comment">Use a TTL &lt;script&gt;alert(1)&lt;/script&gt;</q>');
    expect(page).toContain('<strong>round 2 (this plan)</strong>');
    expect(page).toContain('Changes since round 1 <span class="muted">(1 line added, 1 removed)</span>');
    expect(page).toContain(
      '<li class="remove"><del><span class="sign" aria-hidden="true">-</span><span class="sr-only">removed: </span>1. Add an LRU.</del></li>',
    );
    expect(page).toContain(
      '<li class="add"><ins><span class="sign" aria-hidden="true">+</span><span class="sr-only">added: </span>1. Add an LRU with a TTL &lt;script&gt;alert(1)&lt;/script&gt;.</ins></li>',
    );
    expect(page).toContain('<li class="same"><span class="sign" aria-hidden="true"> </span>2. Test it.</li>');
    // Cost covers both rounds' planning runs.
    expect(page).toMatch(
      /<td>2<\/td><td><a href="\/ui\/runs\/run_[^"]+">run_[^<]+<\/a><\/td><td>—<\/td><td>2<\/td>/,
    );
    expect(page).toContain('<td id="cost-total">$0.0200</td>');
  });

  it('a pull request: title, link, author, head and base; a hostile title and a javascript: URL stay inert', async () => {
    const hostile = await seedPullRequest({
      title: `Fix ${ATTR} ${XSS}`,
      url: 'javascript:alert(1)',
      author: `m${XSS}`,
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', `/ui/plans/${hostile.plan.id}`, { cookie: me.cookie })).text;
    expectInert(page);
    expect(page).toContain('<dt>Pull request</dt><dd>octo/repo#7</dd>');
    expect(page).toContain(
      '<span class="untrusted" id="pr-title">Fix &quot;&gt;&lt;img src=x onerror=alert(1)&gt; &lt;script&gt;alert(1)&lt;/script&gt;</span>',
    );
    expect(page).toContain('<span class="untrusted">m&lt;script&gt;alert(1)&lt;/script&gt;</span>');
    expect(page).toContain(`<dd><code>feature/x</code> at <code>${hostile.headSha}</code></dd>`);
    expect(page).toContain('<dt>Base</dt><dd><code>main</code></dd>');
    expect(page).toContain('pr-review &quot;&gt;&lt;img src=x onerror=alert(1)&gt; (github)');
    expect(page).toContain(`X-GitHub-Delivery <code>${hostile.key}</code>`);
    expect(page).toContain('<span class="untrusted">bug &lt;script&gt;alert(1)&lt;/script&gt;</span>');
    // The description the model read, as text.
    expect(page).toContain(
      '<pre class="untrusted" id="pr-body" aria-labelledby="pr-body-h">body &lt;script&gt;alert(1)&lt;/script&gt;</pre>',
    );
    // The instructions are the trigger's; the payload is not printed as the prompt.
    expect(page).toContain(
      '<pre class="prompt" id="source-prompt" aria-labelledby="prompt-h">Review octo/repo#7</pre>',
    );

    const fine = await seedPullRequest({ title: 'Add docs', url: 'https://github.com/octo/repo/pull/7' });
    const page2 = (await ui(h.app, 'GET', `/ui/plans/${fine.plan.id}`, { cookie: me.cookie })).text;
    expect(page2).toContain(
      '<dd><a href="https://github.com/octo/repo/pull/7" rel="noopener noreferrer nofollow">octo/repo#7</a></dd>',
    );
  });

  it('a fired trigger: its name, the delivery and the fired text as text', async () => {
    const now = h.clock.now();
    const trigger = await h.store.createTrigger({
      id: newId('trg'),
      name: 'deploy-check',
      kind: 'generic',
      events: [],
      filters: {},
      prompt: 'Check the deploy',
      workspace: h.workspace,
      options: {},
      hourlyCap: 10,
      limits: {},
      tokenId: null,
      tokenHash: null,
      enabled: true,
      createdBy: 'admin-user',
      createdAt: now,
      updatedAt: now,
    });
    const { delivery } = await h.store.recordWebhookDelivery({
      id: newId('dlv'),
      source: 'fire',
      key: 'idem-1',
      event: 'fire',
      triggerId: trigger.id,
      outcome: 'accepted',
      detail: null,
      subject: null,
      runIds: [],
      receivedAt: now,
      processedAt: now,
    });
    const { plan } = await seedPlan(h, {
      requestedBy: 'trigger:deploy-check',
      run: {
        source: 'delivery',
        triggerId: trigger.id,
        deliveryId: delivery.id,
        prompt: renderPrompt(
          'Check the deploy',
          { kind: 'fire', event: 'fire', text: `go ${XSS}\n${ATTR}` },
          'deploy-check',
        ),
      },
    });
    const me = await signIn(h.app, h.tokens.viewer);
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expectInert(page);
    expect(page).toContain('<dd>trigger deploy-check; requested by trigger:deploy-check</dd>');
    expect(page).toContain('key <code>idem-1</code>');
    expect(page).toContain(
      '<pre class="untrusted" id="fired-text" aria-labelledby="fired-h">go &lt;script&gt;alert(1)&lt;/script&gt;\n&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</pre>',
    );
  });
});

describe('the decision box', () => {
  const approveRadio = (page: string) =>
    /<input type="radio" name="decision" id="decision-approve"[^>]*>/.exec(page)?.[0];

  it('offers the requester changes and reject only: Approve is disabled with the reason, a forged one refused', async () => {
    const { plan } = await seedPlan(h, { requestedBy: 'approver-user' });
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expect(approveRadio(page)).toContain('disabled aria-describedby="approve-why"');
    expect(page).toContain(
      '<span class="why" id="approve-why">— not offered: you requested this plan; someone else must approve it.</span>',
    );
    expect(page).toContain('id="decision-revise" value="revise" required>');
    expect(page).toContain('id="decision-reject" value="reject" required>');
    expectLabelled(page);

    const forged = await ui(h.app, 'POST', `/ui/plans/${plan.id}/decide`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'approve', sha256: plan.sha256, comment: 'mine, half <b>written' },
    });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('cannot approve it');
    expect(forged.text).toContain('mine, half &lt;b&gt;written</textarea>');
    expect(await h.store.listDecisions(plan.id)).toHaveLength(0);

    // Rejecting one's own plan is allowed.
    const rejected = await ui(h.app, 'POST', `/ui/plans/${plan.id}/decide`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'reject', sha256: plan.sha256, comment: 'not needed' },
    });
    expect(rejected.status).toBe(303);
    expect((await h.store.getPlan(plan.id))!.status).toBe('rejected');
  });

  it('the session owner cannot approve either; someone who approved is told so', async () => {
    const { plan } = await seedPlan(h, { requestedBy: 'operator-user', approvalsRequired: 2 });
    const op = await signIn(h.app, h.tokens.operator);
    const own = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: op.cookie })).text;
    expect(own).toContain('not offered: you requested this plan');

    const me = await signIn(h.app, h.tokens.approver);
    const before = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expect(approveRadio(before)).toBe(
      '<input type="radio" name="decision" id="decision-approve" value="approve" required>',
    );
    expect(before).toContain('(1 of 2 approvals with yours)');
    const ok = await ui(h.app, 'POST', `/ui/plans/${plan.id}/decide`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'approve', sha256: plan.sha256, comment: 'looks right' },
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/ui/plans/${plan.id}?done=approve`);
    const after = (await ui(h.app, 'GET', ok.headers.get('location')!, { cookie: me.cookie })).text;
    expect(after).toContain('Your approval was recorded.');
    expect(approveRadio(after)).toContain('disabled');
    expect(after).toContain('not offered: you already approved it.');
    expect(after).toContain('<td>approved</td><td>approver-user</td>');
    expect(after).toContain('<td class="comment">looks right</td>');
  });

  it('a role without decide gets no form and the reason; a plan no longer pending says its state', async () => {
    const { plan } = await seedPlan(h);
    const v = await signIn(h.app, h.tokens.viewer);
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: v.cookie })).text;
    expect(page).toContain('Your role (viewer) may read plans but not decide them.');
    expect(page).not.toContain('/decide"');
    const forged = await ui(h.app, 'POST', `/ui/plans/${plan.id}/decide`, {
      cookie: v.cookie,
      form: { csrf: v.csrf, decision: 'reject', comment: 'x' },
    });
    expect(forged.status).toBe(403);

    const me = await signIn(h.app, h.tokens.approver);
    await ui(h.app, 'POST', `/ui/plans/${plan.id}/decide`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'revise', sha256: plan.sha256, comment: 'Use a cursor' },
    });
    const revised = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expect(revised).toContain(
      'Changes were requested on this plan (a new round replaces it): it can no longer be decided.',
    );
    expect(revised).toContain('<td>requested changes</td><td>approver-user</td>');

    const late = await seedPlan(h);
    h.clock.advance(86_400_000 + 1);
    const s = await signIn(h.app, h.tokens.approver);
    const expired = (await ui(h.app, 'GET', `/ui/plans/${late.plan.id}`, { cookie: s.cookie })).text;
    expect(expired).toContain('This plan has expired: it can no longer be decided.');
  });

  it('a refused decision re-shows the form with the comment and the choice kept', async () => {
    const { plan } = await seedPlan(h);
    const me = await signIn(h.app, h.tokens.approver);
    const path = `/ui/plans/${plan.id}/decide`;
    const noChoice = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, sha256: plan.sha256, comment: 'half <i>written' },
    });
    expect(noChoice.status).toBe(422);
    expect(noChoice.text).toContain('Choose a decision: approve, request changes or reject.');
    expect(noChoice.text).toContain('half &lt;i&gt;written</textarea>');

    const empty = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'revise', sha256: plan.sha256, comment: '  ' },
    });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain('A revision needs feedback.');
    expect(empty.text).toContain('id="decision-revise" value="revise" required checked>');

    const stale = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'approve', sha256: 'f'.repeat(64), comment: 'ship <it>' },
    });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('not the text you saw');
    expect(stale.text).toContain('id="decision-approve" value="approve" required checked>');
    expect(stale.text).toContain('ship &lt;it&gt;</textarea>');

    const bogus = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'constructor', comment: 'x' },
    });
    expect(bogus.status).toBe(422);
    expect(await h.store.listDecisions(plan.id)).toHaveLength(0);

    // The older per-kind endpoint still works as an alias.
    const alias = await ui(h.app, 'POST', `/ui/plans/${plan.id}/reject`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, comment: 'superseded' },
    });
    expect(alias.status).toBe(303);
    expect(await h.store.listDecisions(plan.id)).toMatchObject([{ kind: 'reject', comment: 'superseded' }]);
  });
});

describe('the queue', () => {
  it('shows the source, marks what the viewer cannot approve, and filters', async () => {
    const pr = await seedPullRequest({ title: `PR ${ATTR}`, url: 'https://github.com/octo/repo/pull/7' });
    const own = await seedPlan(h, { markdown: '# My own plan\n', requestedBy: 'approver-user' });
    const old = await seedPlan(h, { markdown: '# Old plan\n', createdAt: h.clock.now() - 10 * 86_400_000 });
    const stale = await seedPlan(h, { markdown: '# Stale plan\n', workspaceCommit: 'c'.repeat(40) });
    const gone = await seedPlan(h, { markdown: '# Rejected plan\n' });
    await h.store.transitionPlan(gone.plan.id, ['pending_approval'], 'rejected');

    const me = await signIn(h.app, h.tokens.approver);
    const res = await ui(h.app, 'GET', '/ui', { cookie: me.cookie });
    expect(res.status).toBe(200);
    const page = res.text;
    expectInert(page);
    expectLabelled(page);
    // The source column: the pull request with its link, the title as text.
    expect(page).toContain(
      'pull request <a href="https://github.com/octo/repo/pull/7" rel="noopener noreferrer nofollow">octo/repo#7</a><br><span class="untrusted">PR &quot;&gt;&lt;img src=x onerror=alert(1)&gt;</span><br><span class="muted">by mallory</span>',
    );
    expect(page).toContain('by hand <span class="muted">(approver-user)</span>');
    // Marks: one's own plan cannot be approved; others can.
    const row = (id: string) =>
      page.slice(
        page.indexOf(`<tr data-plan="${id}">`),
        page.indexOf('</tr>', page.indexOf(`<tr data-plan="${id}">`)),
      );
    expect(row(own.plan.id)).toContain(
      'You cannot approve: you requested this plan; someone else must approve it.',
    );
    expect(row(old.plan.id)).not.toContain('You cannot approve');
    expect(row(stale.plan.id)).toContain('stale: the workspace has no commit');
    expect(page).not.toContain(gone.plan.id);
    expect(page).toContain(`data-rows-url="/ui/queue/rows"`);

    const ids = (text: string) => [...text.matchAll(/<tr data-plan="([^"]+)">/g)].map((m) => m[1]);
    const get = async (q: string) => {
      const r = await ui(h.app, 'GET', `/ui${q}`, { cookie: me.cookie });
      expect(r.status, r.text).toBe(200);
      return ids(r.text);
    };
    expect(await get('?requester=approver-user')).toEqual([own.plan.id]);
    expect(await get('?older_than_days=7')).toEqual([old.plan.id]);
    expect(await get(`?trigger=${pr.trigger.id}`)).toEqual([pr.plan.id]);
    expect(await get(`?session=${stale.plan.sessionId}`)).toEqual([stale.plan.id]);
    expect(await get('?behind=1')).toEqual([stale.plan.id]);
    expect(await get('?status=rejected')).toEqual([gone.plan.id]);
    expect((await get('?status=any')).sort()).toEqual(
      [pr.plan.id, own.plan.id, old.plan.id, stale.plan.id, gone.plan.id].sort(),
    );
    const filtered = await ui(h.app, 'GET', '/ui?requester=approver-user&behind=1', { cookie: me.cookie });
    expect(filtered.text).toContain('data-rows-url="/ui/queue/rows?requester=approver-user&amp;behind=1"');
    expect(filtered.text).toContain('id="f-requester" name="requester" value="approver-user"');
    expect(filtered.text).toContain('No plans match these filters.');
    const bad = await ui(h.app, 'GET', '/ui?status=nope', { cookie: me.cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('There is no plan status &quot;nope&quot;.');

    // The rows alone, for the page script: no document around them.
    const rows = await ui(h.app, 'GET', '/ui/queue/rows?requester=approver-user', { cookie: me.cookie });
    expect(rows.status).toBe(200);
    expect(rows.text.trimStart().startsWith(`<tr data-plan="${own.plan.id}">`)).toBe(true);
    expect(rows.text).not.toContain('<html');
    expect((await ui(h.app, 'GET', '/ui/queue/rows')).status).not.toBe(200);

    // A viewer: no checkboxes, no bulk form, the reason.
    const v = await signIn(h.app, h.tokens.viewer);
    const vpage = (await ui(h.app, 'GET', '/ui', { cookie: v.cookie })).text;
    expect(vpage).toContain('Your role (viewer) may read plans but not decide them.');
    expect(vpage).not.toContain('name="plan"');
    expect(vpage).not.toContain('id="bulk-form"');
  });

  it('bulk reject: each selected plan through the decision path, with what happened to each', async () => {
    const a = await seedPlan(h, { markdown: '# A\n' });
    const b = await seedPlan(h, { markdown: '# B\n', requestedBy: 'approver-user' });
    const c = await seedPlan(h, { markdown: '# C\n' });
    await h.store.transitionPlan(c.plan.id, ['pending_approval'], 'approved');
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', '/ui', { cookie: me.cookie })).text;
    expect(page).toContain(
      '<form method="post" action="/ui/plans/bulk-reject" class="decide bulk" id="bulk-form">',
    );
    expect(page).toContain(`name="plan" value="${a.plan.id}" id="pick-${a.plan.id}" form="bulk-form">`);
    expect(page).toContain('id="select-all"');

    const noComment = await ui(h.app, 'POST', '/ui/plans/bulk-reject', {
      cookie: me.cookie,
      form: { csrf: me.csrf, plan: [a.plan.id, b.plan.id], comment: ' ' },
    });
    expect(noComment.status).toBe(422);
    expect(noComment.text).toContain('A rejection needs a comment.');
    expect(noComment.text).toContain(`value="${a.plan.id}" id="pick-${a.plan.id}" form="bulk-form" checked>`);
    const none = await ui(h.app, 'POST', '/ui/plans/bulk-reject', {
      cookie: me.cookie,
      form: { csrf: me.csrf, comment: 'stale <b>' },
    });
    expect(none.status).toBe(422);
    expect(none.text).toContain('Select at least one plan to reject.');
    expect(none.text).toContain('stale &lt;b&gt;</textarea>');

    const res = await ui(h.app, 'POST', '/ui/plans/bulk-reject', {
      cookie: me.cookie,
      form: { csrf: me.csrf, plan: [a.plan.id, b.plan.id, c.plan.id, 'pln_missing'], comment: 'superseded' },
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Bulk rejection: 2 rejected, 2 refused');
    expect(res.text).toContain(
      `<li><a href="/ui/plans/${c.plan.id}">${c.plan.id}</a>: plan ${c.plan.id} is approved, no longer pending approval</li>`,
    );
    expect(res.text).toContain(
      '<li><a href="/ui/plans/pln_missing">pln_missing</a>: plan pln_missing not found</li>',
    );
    for (const p of [a, b]) {
      expect((await h.store.getPlan(p.plan.id))!.status).toBe('rejected');
      expect(await h.store.listDecisions(p.plan.id)).toMatchObject([
        { kind: 'reject', identity: 'approver-user', comment: 'superseded' },
      ]);
    }
    expect((await h.store.getPlan(c.plan.id))!.status).toBe('approved');

    const v = await signIn(h.app, h.tokens.viewer);
    const forged = await ui(h.app, 'POST', '/ui/plans/bulk-reject', {
      cookie: v.cookie,
      form: { csrf: v.csrf, plan: [c.plan.id], comment: 'x' },
    });
    expect(forged.status).toBe(403);
  });
});

describe('freshness on the plan page (smart staleness)', () => {
  /** The harness's workspace as a git repository; a plan on its first commit that read README.md. */
  async function planOnRepo() {
    const base = makeRepo(h.workspace, { 'README.md': '# r\n', 'src/a.ts': 'a\n' });
    const { plan } = await seedPlan(h, {
      workspaceCommit: base,
      footprint: { files: ['README.md'], dirs: [], globs: [] },
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = async () => (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    return { plan, me, page };
  }
  const commit = (file: string) => {
    writeFileSync(join(h.workspace, file), 'changed\n');
    git(h.workspace, 'add', '-A');
    git(h.workspace, 'commit', '-q', '-m', `touch ${file}`);
  };

  it('moved on without touching what it read: says so and offers Approve', async () => {
    const { page, plan } = await planOnRepo();
    expect(await page()).not.toContain('id="plan-freshness"');
    commit('src/a.ts');
    const shown = await page();
    expect(shown).toContain('Workspace moved on by 1 commit; none touch what this plan read.');
    expect(shown).toContain('id="decision-approve"');
    // The queue says the same in the plan's row.
    const me = await signIn(h.app, h.tokens.approver);
    const queue = (await ui(h.app, 'GET', '/ui?behind=1', { cookie: me.cookie })).text;
    expect(queue).toContain(`<tr data-plan="${plan.id}">`);
    expect(queue).toContain('workspace moved on by 1 commit; none touch what this plan read');
  });

  it('a commit touching a read file: stale, why, and no Approve (a forged approval is refused 409)', async () => {
    const { plan, me, page } = await planOnRepo();
    commit('README.md');
    const shown = await page();
    expect(shown).toContain('<strong>Stale: this plan cannot be approved.</strong>');
    expect(shown).toContain('they change what this plan read or touches: README.md');
    expect(shown).toContain('Changed since: <code>README.md</code>');
    expect(shown).not.toContain('id="decision-approve"');
    expect(shown).toContain('id="decision-revise"');
    expect(shown).toContain('id="decision-reject"');
    const forged = await ui(h.app, 'POST', `/ui/plans/${plan.id}/decide`, {
      cookie: me.cookie,
      form: { csrf: me.csrf, decision: 'approve', sha256: plan.sha256 },
    });
    expect(forged.status).toBe(409);
    expect(forged.text).toContain('is stale');
    expect(await h.store.listDecisions(plan.id)).toHaveLength(0);
    const queue = (await ui(h.app, 'GET', '/ui', { cookie: me.cookie })).text;
    expect(queue).toContain('stale: a commit since changed README.md');
  });
});
