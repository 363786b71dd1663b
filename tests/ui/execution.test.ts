import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../src/http/deps.js';
import { executionSection } from '../../src/ui/pages/execution.js';
import { createHarness, type Harness } from '../support/harness.js';
import { seedExecution } from './execution-seed.js';
import { seedToolApproval, signIn, ui } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const HOSTILE_NAME = '"><img src=x onerror=alert(1)>.js';

/** No element or attribute a page's own markup would not hold: hostile text stays text. */
function expectInert(page: string) {
  expect(page).not.toMatch(/<script(?![^>]*src="\/ui\/app\.js")/);
  expect(page).not.toMatch(/<img/i);
  // Escaped text holds no `<`, so every match is a real tag: none carries an event handler.
  for (const tag of page.match(/<[a-z][^>]*>/gi) ?? []) expect(tag).not.toMatch(/\son\w+=/i);
}

/** Records a Bash call and its result in the run's conversation, as the agent loop does. */
async function ranCommand(
  x: Awaited<ReturnType<typeof seedExecution>>,
  id: string,
  command: string,
  output: string,
  isError = false,
) {
  await h.store.appendMessages(
    x.run.conversationId!,
    x.run.id,
    [
      { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: id, content: output, ...(isError ? { is_error: true } : {}) },
        ],
      },
    ],
    h.clock.now(),
  );
}

describe('an execute run page shows the execution as a review would', () => {
  it('renders branch, commit, the diff per file and the commands with their output, all inert', async () => {
    const x = await seedExecution(h, {
      changes: {
        'src/app.ts': 'export const a = "</td><script>alert(1)</script>";\n',
        [HOSTILE_NAME]: 'let y = 1;\x1b[2J\n',
      },
    });
    await h.store.appendMessages(
      x.run.conversationId!,
      x.run.id,
      [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      h.clock.now(),
    );
    await ranCommand(x, 'toolu_1', 'npm test -- "<b>"', 'ok 1 </pre><script>alert(2)</script>\n');
    const long = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    await ranCommand(x, 'toolu_2', 'make lint', long, true);
    const { cookie } = await signIn(h.app, h.tokens.viewer);
    const res = await ui(h.app, 'GET', `/ui/runs/${x.run.id}`, { cookie });
    expect(res.status).toBe(200);
    const page = res.text;
    expectInert(page);
    expect(page).toContain(`<dt>Branch</dt><dd><code>drydock/${x.plan.id}</code></dd>`);
    expect(page).toContain(`<code>${x.run.resultCommit}</code>`);
    expect(page).toContain('<h2 id="execution-heading">Execution</h2>');
    // Two files, one section each, the hostile name escaped in the heading.
    expect(page.match(/<section class="diff-file"/g)).toHaveLength(2);
    expect(page).toContain(
      '<code>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.js</code> <span class="diff-mark diff-mark-new">new file</span>',
    );
    expect(page).toContain('&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain(
      '<span class="tk-kw">let</span> y = <span class="tk-num">1</span>;␛[<span class="tk-num">2J</span>',
    );
    expect(page).toMatch(
      /<td class="diff-marker" aria-label="removed">-<\/td><td class="diff-code"><code><span class="tk-kw">export<\/span>/,
    );
    // Commands: the short output open, the long one folded; escaped in <pre>.
    expect(page).toContain(
      '<code class="cmd">$ npm test -- &quot;&lt;b&gt;&quot;</code> <span class="cmd-state cmd-ok">ok</span>',
    );
    expect(page).toContain(
      '<pre class="cmd-output">ok 1 &lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;\n</pre>',
    );
    expect(page).toContain(
      '<code class="cmd">$ make lint</code> <span class="cmd-state cmd-error">failed</span>',
    );
    expect(page).toMatch(
      /<details class="cmd-details"><summary>Output \(40 lines, \d+ characters\)<\/summary><pre class="cmd-output">line 0\nline 1/,
    );
    // The live log is a timeline list the script fills.
    expect(page).toContain('<ol id="run-events" class="events timeline"');
  });

  it('says why there is no diff for an execution still running; a planning run has no execution section', async () => {
    const running = await seedExecution(h, { status: 'running' });
    const { cookie } = await signIn(h.app, h.tokens.viewer);
    const page = (await ui(h.app, 'GET', `/ui/runs/${running.run.id}`, { cookie })).text;
    expect(page).toContain(
      'data-state="pending">No diff yet: the execution has not recorded a commit yet (the run is running).',
    );
    expect(page).toContain('No commands were run.');
    // A planning run has no execution section.
    const planPage = (await ui(h.app, 'GET', `/ui/runs/${running.planRun.id}`, { cookie })).text;
    expect(planPage).not.toContain('execution-heading');
  });

  it('executionSection gives the plan page the same, with its facts', async () => {
    const x = await seedExecution(h);
    const deps = { store: h.store, config: h.config } as unknown as AppDeps;
    const section = (await executionSection(deps, x.plan)).value;
    expect(section).toContain('<h2 id="execution-heading">Execution</h2>');
    expect(section).toContain(`<code class="execution-branch">drydock/${x.plan.id}</code>`);
    expect(section).toContain(`<code class="execution-commit">${x.run.resultCommit}</code>`);
    expect(section).toContain('src/app.ts | 2 +-');
    expect(section).toContain('1 file changed');
    expect(section).toContain(
      '<span class="execution-status status" data-status="completed" title="completed">completed</span>',
    );
    // A plan that was not executed has no section.
    const fresh = { ...x.plan, id: 'pln_none', runId: 'run_none' };
    expect((await executionSection(deps, fresh)).value).toBe('');
  });
});

describe('GET /v1/runs/:id/diff', () => {
  it('answers the diff as JSON, 409 for a planning run, 404 for an unknown run', async () => {
    const x = await seedExecution(h);
    const res = await h.call('GET', `/v1/runs/${x.run.id}/diff`, { role: 'viewer' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      run_id: x.run.id,
      plan_id: x.plan.id,
      state: 'ready',
      reason: null,
      branch: `drydock/${x.plan.id}`,
      base_commit: x.base,
      commit: x.run.resultCommit,
      files: [{ path: 'src/app.ts', old_path: null, additions: 1, deletions: 1, binary: false }],
      shown_files: 1,
      truncated: null,
    });
    expect(res.body.diff).toContain('-export const a = 1;\n+export const a = 2;\n');
    const planRun = await h.call('GET', `/v1/runs/${x.planRun.id}/diff`, { role: 'viewer' });
    expect(planRun.status).toBe(409);
    expect(planRun.body.error.code).toBe('not_an_execution');
    expect((await h.call('GET', '/v1/runs/run_nope/diff', { role: 'viewer' })).status).toBe(404);
    expect((await h.call('GET', `/v1/runs/${x.run.id}/diff`, { token: null })).status).toBe(401);
  });
});

describe('pending tool calls read as diffs', () => {
  it('a Write as the diff against the worktree file, a new file as all added, an Edit with context, Bash as a command', async () => {
    const x = await seedExecution(h, {
      status: 'running',
      executeMode: 'manual',
      files: { 'src/app.ts': 'line 1\nline 2\nconst a = 1;\nline 4\nline 5\nline 6\nline 7\nline 8\n' },
      changes: {},
    });
    h.clock.advance(1_000); // listed oldest first
    await seedToolApproval(h, x.plan, x.run, {
      toolUseId: 'toolu_w1',
      tool: 'Write',
      input: {
        file_path: 'src/app.ts',
        content:
          'line 1\nline 2\nconst a = "</td><script>alert(1)</script>";\nline 4\nline 5\nline 6\nline 7\nline 8\n',
      },
    });
    h.clock.advance(1_000); // listed oldest first
    await seedToolApproval(h, x.plan, x.run, {
      toolUseId: 'toolu_w2',
      tool: 'Write',
      input: { file_path: HOSTILE_NAME, content: 'one\n<img src=x onerror=alert(1)>\n' },
    });
    h.clock.advance(1_000); // listed oldest first
    await seedToolApproval(h, x.plan, x.run, {
      toolUseId: 'toolu_e1',
      tool: 'Edit',
      input: { file_path: 'src/app.ts', old_string: 'const a = 1;', new_string: 'const a = 2; // </pre>' },
    });
    h.clock.advance(1_000); // listed oldest first
    await seedToolApproval(h, x.plan, x.run, {
      toolUseId: 'toolu_e2',
      tool: 'Edit',
      input: { file_path: 'src/app.ts', old_string: 'not there', new_string: 'x' },
    });
    h.clock.advance(1_000); // listed oldest first
    await seedToolApproval(h, x.plan, x.run, {
      toolUseId: 'toolu_e3',
      tool: 'Edit',
      input: { file_path: '../../outside.txt', old_string: 'a', new_string: 'b' },
    });
    h.clock.advance(1_000); // listed oldest first
    await seedToolApproval(h, x.plan, x.run, {
      toolUseId: 'toolu_b1',
      tool: 'Bash',
      input: { command: 'echo "</pre><script>alert(1)</script>"\nnpm test', description: 'Run the tests' },
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', '/ui/tool-approvals', { cookie: me.cookie })).text;
    expectInert(page);
    const sections = page.split('<section class="tool-approval"').slice(1);
    expect(sections).toHaveLength(6);
    const [write, created, edit, missing, outside, bash] = sections as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];

    expect(write).toContain('Replaces <code>src/app.ts</code>');
    expect(write).toContain('@@ -1,6 +1,6 @@');
    expect(write).toContain(
      '<td class="diff-ln">3</td><td class="diff-ln"></td><td class="diff-marker" aria-label="removed">-</td>',
    );
    expect(write).toContain('&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(write.split('<details class="tool-json">')[0]).not.toContain('line 7'); // three lines of context only

    expect(created).toContain('Creates <code>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.js</code>');
    expect(created).toContain('<span class="diff-mark diff-mark-new">new file</span>');
    expect(created).toContain('@@ -0,0 +1,2 @@');
    expect(created).toContain('&lt;img src=x onerror=alert(1)&gt;');

    expect(edit).toContain('Edits <code>src/app.ts</code>');
    expect(edit).toContain(
      '<td class="diff-ln"></td><td class="diff-ln">3</td><td class="diff-marker" aria-label="added">+</td>',
    );
    expect(edit).toContain('<span class="tk-com">// &lt;/pre&gt;</span>');
    expect(edit).toContain('line <span class="tk-num">2</span>'); // context from the current file

    expect(missing).toContain('old_string is not in the current file (the Edit will fail as it stands)');
    expect(missing).toContain('aria-label="removed">-</td><td class="diff-code"><code>not there</code>');
    expect(outside).toContain(
      'the path is refused: path &quot;../../outside.txt&quot; is outside the workspace',
    );

    expect(bash).toContain(
      '<pre class="cmd-preview" aria-label="Command">$ echo &quot;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;\nnpm test</pre>',
    );
    expect(bash).toContain('<p>Run the tests</p>');
    // Never raw JSON as the main view: it is one click away, closed.
    for (const s of sections) {
      expect(s).toContain('<details class="tool-json"><summary>Tool input as JSON</summary>');
      expect(s).toContain('value="allow"');
      expect(s).toContain('value="deny"');
    }
  });
});
