import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/agent/sandbox.js';
import { DEFAULT_NETWORK_DOMAINS, normalizedDomains } from '../../src/domain/network.js';
import { ADMIN_TOKEN, readSse, startTestDaemon } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import {
  approveAs,
  calls,
  jobIn,
  pendingApproval,
  planned,
  plannedJob,
  proposes,
  runUntil,
  says,
  tokenFor,
  type World,
  world,
} from './helpers.js';

// The execute phase stays in its place: git is never configured by the workspace, commands are confined, a
// session on a subdirectory executes there, approvals bind the exact call, and the requester of a plan cannot
// allow its own calls. Each test here failed before the containment work.

let model: ModelServer;
let w: World | undefined;
let extra: { stop(): Promise<void> } | undefined;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  w = undefined;
  await extra?.stop();
  extra = undefined;
  await model.close();
});

/** The last tool_result the model received for `id`. */
function resultFor(id: string): any {
  for (const req of [...model.requests].reverse()) {
    for (const m of [...req.body.messages].reverse()) {
      if (!Array.isArray(m.content)) continue;
      const found = m.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === id);
      if (found) return found;
    }
  }
  return undefined;
}

/** A `.gitconfig` (and its XDG twin) whose fsmonitor hook leaves a marker file wherever git reads it. */
function hostileGitConfig(marker: string): string {
  return `[core]\n\tfsmonitor = "touch ${marker}; false"\n`;
}

describe('git is never configured by the workspace', () => {
  it('a .gitconfig the model Writes in edits mode does not run when drydock commits the execution', async () => {
    w = await world(model, { execute_mode: 'edits' });
    const alice = await w.token('alice');
    const marker = join(w.d.dir, 'pwned-by-write');
    const xdgMarker = join(w.d.dir, 'pwned-by-xdg');
    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: '.gitconfig', content: hostileGitConfig(marker) }),
      calls('w2', 'Write', { file_path: '.config/git/config', content: hostileGitConfig(xdgMarker) }),
      calls('w3', 'Write', { file_path: '.git/config', content: hostileGitConfig(marker) }),
      says('done'),
    );
    const { plan } = await planned(w);
    const exec = await approveAs(w.d, plan, alice);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(xdgMarker)).toBe(false);
    // The files were written and committed as ordinary content; `.git` itself is refused to Write.
    expect(resultFor('w3')).toMatchObject({ is_error: true });
    expect(resultFor('w3').content).toMatch(/inside \.git/);
    expect(done.changed_files).toEqual(['.config/git/config', '.gitconfig']);
  });
});

describe('the execute phase works in the session directory', () => {
  it('a session on repo/sub executes in <worktree>/sub: ../ is outside, writes land in sub, commands see only sub', async () => {
    const d = await startTestDaemon({ modelUrl: model.url });
    extra = d;
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'secret.txt': 'top-level secret 5c1e\n', 'sub/a.txt': 'a in sub\n' });
    const { jobId } = await jobIn(d, join(repo, 'sub'), { execute_mode: 'edits' });
    model.enqueue(
      calls('p-read', 'Read', { file_path: '../secret.txt' }),
      proposes(),
      calls('x-read', 'Read', { file_path: '../secret.txt' }),
      calls('x-read-a', 'Read', { file_path: 'a.txt' }),
      calls('x-write', 'Write', { file_path: 'b.txt', content: 'b\n' }),
      calls('x-bash', 'Bash', {
        command: 'cat ../secret.txt; cat a.txt; pwd; git status --porcelain; echo git=$?',
      }),
      says('done'),
    );
    const { plan } = await plannedJob(d, jobId);
    const alice = await tokenFor(d, 'alice');
    const exec = await approveAs(d, plan, alice);
    const bash = await pendingApproval(d);
    expect(bash).toMatchObject({
      tool: 'Bash',
      input: { command: 'cat ../secret.txt; cat a.txt; pwd; git status --porcelain; echo git=$?' },
    });
    await d.api('POST', `/v1/tool-approvals/${bash.id}`, { decision: 'allow' }, alice);
    const done = await runUntil(d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');

    // Both phases refuse the same path: the plan's relative paths mean the same files.
    expect(resultFor('p-read')).toMatchObject({ is_error: true });
    expect(resultFor('x-read')).toMatchObject({ is_error: true });
    expect(resultFor('x-read').content).toMatch(/outside the workspace/);
    expect(resultFor('x-read-a').content).toContain('a in sub');
    const bashOut = resultFor('x-bash').content;
    expect(bashOut).not.toContain('top-level secret');
    expect(bashOut).toContain('a in sub');
    expect(bashOut).toMatch(new RegExp(`${plan.id}/sub\\n`));
    // git works there, against the repository's git directory, and sees only the session's directory: the
    // rest of the worktree is not there and not taken for deleted.
    expect(bashOut).toContain('git=0');
    expect(bashOut).not.toMatch(/fatal|filesystem boundary/);
    expect(bashOut).toContain('?? sub/b.txt');
    expect(bashOut).not.toMatch(/^ ?D /m);
    // The commit adds sub/b.txt, nothing at the top.
    expect(done.changed_files).toEqual(['sub/b.txt']);
    expect(git(repo, 'show', `drydock/${plan.id}:sub/b.txt`)).toBe('b');
  });
});

describe('an approval binds the exact call', () => {
  it('a tool_use id used again with another input is refused, never run under the earlier approval', async () => {
    w = await world(model, { execute_mode: 'manual' });
    const alice = await w.token('alice');
    model.enqueue(
      proposes(),
      calls('b1', 'Bash', { command: 'echo one > one.txt' }),
      calls('b1', 'Bash', { command: 'echo two > two.txt' }),
    );
    const { plan } = await planned(w);
    const exec = await approveAs(w.d, plan, alice);
    const first = await pendingApproval(w!.d);
    expect(first.input).toEqual({ command: 'echo one > one.txt' });
    await w.d.api('POST', `/v1/tool-approvals/${first.id}`, { decision: 'allow' }, alice);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    // The Messages API refuses a conversation that repeats a tool_use id: the run ends, asking nothing more.
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(
      /protocol error: the model's reply reused tool_use id "b1"; that call was not run/,
    );
    // The plan, the first Bash, the reply that reused its id: no request after it.
    expect(model.requests).toHaveLength(3);
    const tree = join(w.d.dir, 'data/worktrees', plan.id);
    expect(readFileSync(join(tree, 'one.txt'), 'utf8')).toBe('one\n');
    expect(existsSync(join(tree, 'two.txt'))).toBe(false);
    expect(await pendingApproval(w.d, () => true, 200).catch(() => null)).toBeNull();
    const run = (await w.d.daemon.store.getRun(exec.id))!;
    const stored = await w.d.daemon.store.loadConversation(run.conversationId ?? run.id);
    const refused = (stored.at(-1)!.content as any[]).at(-1);
    expect(refused).toMatchObject({ tool_use_id: 'b1', is_error: true });
    expect(refused.content).toMatch(/already used in this conversation/);
    const events = await readSse(`${w.d.daemon.url}/v1/runs/${exec.id}/events`, ADMIN_TOKEN);
    expect(events.find((e) => e.event === 'policy_violation')?.data).toMatchObject({
      tool_use_id: 'b1',
      reason: 'repeated_tool_use_id',
    });
  });

  it('the requester may deny, but not allow, a tool call of its own plan', async () => {
    w = await world(model, { execute_mode: 'manual' });
    const alice = await w.token('alice');
    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }),
      calls('w2', 'Write', { file_path: 'b.txt', content: 'B\n' }),
      says('done'),
    );
    const { plan } = await planned(w);
    expect(plan.requested_by).not.toBe('alice');
    const exec = await approveAs(w.d, plan, alice);
    const a = await pendingApproval(w!.d);
    // The admin token created the job: its identity requested the plan.
    const self = await w.d.api('POST', `/v1/tool-approvals/${a.id}`, { decision: 'allow' });
    expect(self.status).toBe(403);
    expect(self.body.error).toMatchObject({ code: 'self_approval' });
    expect(self.body.error.message).toMatch(/requested this plan and cannot allow its tool calls/);
    expect((await w.d.api('GET', `/v1/tool-approvals/${a.id}`)).body.status).toBe('pending');
    expect((await w.d.api('POST', `/v1/tool-approvals/${a.id}`, { decision: 'allow' }, alice)).status).toBe(
      200,
    );
    const b = await pendingApproval(w!.d);
    const denied = await w.d.api('POST', `/v1/tool-approvals/${b.id}`, { decision: 'deny', message: 'no' });
    expect(denied.status).toBe(200);
    expect(denied.body.status).toBe('denied');
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.changed_files).toEqual(['a.txt']);
  });
});

describe('unborn repositories', () => {
  it('plan, then refuse to execute with a clear message: the checkout is never changed', async () => {
    const d = await startTestDaemon({ modelUrl: model.url });
    extra = d;
    const repo = join(d.dir, 'fresh');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    writeFileSync(join(repo, 'draft.md'), 'not committed yet\n');
    const { jobId } = await jobIn(d, repo, { execute_mode: 'edits' });
    model.enqueue(
      calls('r', 'Read', { file_path: 'draft.md' }),
      proposes(),
      calls('w', 'Write', { file_path: 'new.txt', content: 'x\n' }),
      says('done'),
    );
    const { plan } = await plannedJob(d, jobId);
    expect(plan.workspace_commit).toBeNull();
    const alice = await tokenFor(d, 'alice');
    const exec = await approveAs(d, plan, alice);
    const done = await runUntil(d, exec.id, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/git repository without a commit yet.*commit first/);
    expect((await d.api('GET', `/v1/plans/${plan.id}`)).body).toMatchObject({
      status: 'execution_failed',
      failure_reason: expect.stringMatching(/without a commit yet/),
    });
    expect(readdirSync(repo).sort()).toEqual(['.git', 'draft.md']);
  });
});

describe('without a working sandbox, Bash fails closed', () => {
  it('in auto and manual mode: nothing runs and nobody is asked to allow an unconfined command', async () => {
    const d = await startTestDaemon({
      modelUrl: model.url,
      sandbox: new Sandbox({ setting: 'bwrap', bwrap: '/nonexistent/bwrap' }),
    });
    extra = d;
    expect(d.daemon.sandbox.state).toBe('unavailable');
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'README.md': '# r\n' });
    const alice = await tokenFor(d, 'alice');
    for (const mode of ['auto', 'manual'] as const) {
      const { jobId } = await jobIn(d, repo, { execute_mode: mode });
      const id = `bash-${mode}`;
      model.enqueue(proposes(), calls(id, 'Bash', { command: 'git status > ran.txt' }), says('done'));
      const { plan } = await plannedJob(d, jobId);
      const exec = await approveAs(d, plan, alice);
      const done = await runUntil(d, exec.id, ['completed', 'failed', 'awaiting_input']);
      expect(done.status).toBe('completed');
      expect(resultFor(id)).toMatchObject({ is_error: true });
      expect(resultFor(id).content).toMatch(
        /Bash is not available: the bubblewrap sandbox does not work here/,
      );
      expect(existsSync(join(d.dir, 'data/worktrees', plan.id, 'ran.txt'))).toBe(false);
      expect((await d.api('GET', `/v1/tool-approvals?run_id=${exec.id}`)).body.items).toEqual([]);
    }
  });
});

describe('auto mode: the allow-list does not reach outside the workspace', () => {
  it('an allow-listed command with an escaping argument waits for a person, with the reason', async () => {
    w = await world(model, { execute_mode: 'auto' });
    const alice = await w.token('alice');
    const db = join(w.d.dir, 'data', 'drydock.db');
    model.enqueue(
      proposes(),
      calls('b1', 'Bash', { command: `git diff --no-index --output=${db} README.md README.md` }),
      says('done'),
    );
    const { plan } = await planned(w);
    const exec = await approveAs(w.d, plan, alice);
    await runUntil(w.d, exec.id, ['awaiting_input']);
    const a = await pendingApproval(w.d);
    expect(a).toMatchObject({ tool: 'Bash', run_id: exec.id });
    const request = (await w.d.daemon.store.listEvents(exec.id, 0, 100)).find(
      (e) => e.type === 'tool_approval_request',
    );
    expect(request?.data.reason).toMatch(/--no-index/);
    expect(readFileSync(db).subarray(0, 15).toString()).toBe('SQLite format 3');
  });
});

describe('limits of an execution', () => {
  it('a worktree that grows past execute.limits.worktree_bytes is told so, and the execution fails', async () => {
    w = await world(model, { execute_mode: 'edits' }, (c) => {
      c.execute.limits.worktree_bytes = 1024 * 1024;
    });
    const alice = await w.token('alice');
    model.enqueue(
      proposes(),
      calls('big', 'Bash', { command: 'head -c 3000000 /dev/zero > big.bin && echo wrote' }),
      says('done'),
    );
    const { plan } = await planned(w);
    const exec = await approveAs(w.d, plan, alice);
    const bash = await pendingApproval(w.d);
    await w.d.api('POST', `/v1/tool-approvals/${bash.id}`, { decision: 'allow' }, alice);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(resultFor('big').content).toMatch(
      /grew by 3000000 bytes, past execute\.limits\.worktree_bytes \(1048576\)/,
    );
    expect(resultFor('big').is_error).toBe(true);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/past execute\.limits\.worktree_bytes/);
  });
});

describe('the network of commands', () => {
  // A network allowed is a list of host names reached through drydock's egress proxy, never the host's
  // network: before lists, `network: true` shared the host's network and this command read the server on the
  // host's 127.0.0.1 (a PostgreSQL with trust auth, the daemon's own API would have been as reachable).
  it('never the host network: the plan shows the names, the proxy answers for them, /readyz names the sandbox', async () => {
    const { createServer } = await import('node:net');
    let connections = 0;
    const server = createServer((s) => {
      connections += 1;
      s.on('error', () => undefined);
      s.end('hello from the host\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const cases: [unknown, string[]][] = [
      [false, []],
      [['Example.test'], ['example.test']],
      // Deprecated: the configured default list.
      [true, normalizedDomains(DEFAULT_NETWORK_DOMAINS)],
    ];
    try {
      for (const [network, domains] of cases) {
        w = await world(model, { execute_mode: 'manual', network });
        const alice = await w.token('alice');
        const id = `net-${domains.length}`;
        const command = `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3); echo "proxy=$HTTPS_PROXY"; curl -sS --max-time 10 http://elsewhere.test/`;
        model.enqueue(proposes(), calls(id, 'Bash', { command }), says('done'));
        const { plan } = await planned(w);
        expect(plan).toMatchObject({ network: domains.length > 0, network_domains: domains });
        const exec = await approveAs(w.d, plan, alice);
        const a = await pendingApproval(w!.d);
        await w.d.api('POST', `/v1/tool-approvals/${a.id}`, { decision: 'allow' }, alice);
        await runUntil(w.d, exec.id, ['completed', 'failed']);
        const out: string = resultFor(id).content;
        expect(out).not.toContain('hello from the host');
        if (domains.length) {
          expect(out).toMatch(/proxy=http:\/\/127\.0\.0\.1:\d+\n/);
          expect(out).toContain(
            `drydock egress proxy: elsewhere.test is not on this execution's list of host names (${domains.join(', ')})`,
          );
        } else {
          expect(out).toMatch(/proxy=\n/);
          expect(out).toContain('Could not resolve host: elsewhere.test');
        }
        expect(connections).toBe(0);
        const ready = await fetch(`${w.d.daemon.url}/readyz`);
        expect(await ready.json()).toMatchObject({ status: 'ready', sandbox: 'bwrap' });
        await w.d.stop();
        w = undefined;
      }
    } finally {
      server.close();
    }
  });
});
