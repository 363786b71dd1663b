import { type ChildProcess, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approveAs, jobIn, pendingApproval, plannedJob, runUntil } from '../plans/helpers.js';
import { waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, type ScriptedResponse, startModelServer } from '../support/model-server.js';
import { createTokenOffline, type DaemonProcess, serveProcess } from '../support/process-daemon.js';

// The daemon as a real process with real secrets in its environment, commands in the real sandbox, and real
// SIGKILLs: what a command can see of the daemon, and what becomes of a command the daemon dies under.

let model: ModelServer;
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const x of dirs.splice(0)) x.remove();
  await model?.close();
});

const calls = (id: string, name: string, input: unknown): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name, input }],
});
const proposes: ScriptedResponse = calls('plan', 'ExitPlanMode', { plan: '## Run the command\n' });

/** The last tool_result the model received for `id`. */
function resultFor(id: string): any {
  for (const req of [...model.requests].reverse()) {
    const found = req.body.messages
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .find((b: any) => b.type === 'tool_result' && b.tool_use_id === id);
    if (found) return found;
  }
  return undefined;
}

function running(pattern: string): string[] {
  return spawnSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
}

interface Setup {
  data: string;
  repo: string;
  alice: string;
}

function setup(prefix: string): Setup {
  const tmp = tempDir(prefix);
  dirs.push(tmp);
  const data = join(tmp.path, 'data');
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'README.md': '# r\n' });
  const alice = createTokenOffline(data, 'alice', 'approver');
  return { data, repo, alice };
}

/** A manual-mode session, a job fired now, its plan approved by alice; resolves with the execute run id. */
async function executing(d: DaemonProcess, s: Setup): Promise<{ runId: string; planId: string }> {
  const { jobId } = await jobIn(d, s.repo, { execute_mode: 'manual' });
  const { plan } = await plannedJob(d, jobId);
  const run = await approveAs(d, plan, s.alice);
  return { runId: run.id, planId: plan.id };
}

async function allowNext(d: DaemonProcess, s: Setup, toolUseId: string): Promise<void> {
  const pending = await pendingApproval(d, (a) => a.tool_use_id === toolUseId);
  expect(
    (await d.api('POST', `/v1/tool-approvals/${pending.id}`, { decision: 'allow' }, s.alice)).status,
  ).toBe(200);
}

describe("a command cannot read the daemon's secrets", () => {
  it('/proc/$PPID/environ and /proc/1/environ hold nothing of the daemon environment', async () => {
    model = await startModelServer();
    const s = setup('drydock-environ-');
    const secrets = {
      ANTHROPIC_API_KEY: `sk-ant-secret-${randomInt(1e9)}`,
      GITHUB_WEBHOOK_SECRET: `whsec-${randomInt(1e9)}`,
      GITHUB_TOKEN: `ghp_secret${randomInt(1e9)}`,
    };
    const command = 'cat /proc/$PPID/environ; echo; cat /proc/1/environ; echo; ls /proc; env';
    model.enqueue(proposes, calls('env', 'Bash', { command }), {
      kind: 'message',
      content: [{ type: 'text', text: 'done' }],
    });
    const d = await serveProcess(s.data, model.url, children, secrets);
    const { runId } = await executing(d, s);
    await allowNext(d, s, 'env');
    await waitFor(async () => (await d.api('GET', `/v1/runs/${runId}`)).body.status === 'completed');
    const out: string = resultFor('env').content;
    expect(out).toMatch(/exit code 0$/);
    expect(out).toContain('PATH=');
    for (const value of [...Object.values(secrets), 'test-admin-token-0123456789abcdef']) {
      expect(out).not.toContain(value);
    }
    await d.kill();
  });
});

describe('a command runs at most once per approval', () => {
  for (const sandbox of ['bwrap', 'off'] as const) {
    it(`SIGKILL during an approved command (sandbox ${sandbox}): it ran once, its processes are gone, the execution starts over and asks again`, async () => {
      model = await startModelServer();
      const s = setup(`drydock-once-${sandbox}-`);
      const env: Record<string, string> = {};
      if (sandbox === 'off') {
        const file = join(s.data, '..', 'drydock.yaml');
        writeFileSync(file, 'execute:\n  sandbox: off\n');
        env.DRYDOCK_CONFIG = file;
      }
      const seconds = `${randomInt(600, 900)}.${randomInt(1e6)}`;
      model.enqueue(
        proposes,
        calls('long', 'Bash', {
          command: `echo started >> ran.txt; sleep ${seconds}; echo finished >> ran.txt`,
        }),
        calls('again', 'Bash', { command: 'echo asked again' }),
      );
      const first = await serveProcess(s.data, model.url, children, env);
      const { runId, planId } = await executing(first, s);
      await allowNext(first, s, 'long');
      const ran = join(s.data, 'worktrees', planId, 'ran.txt');
      await waitFor(
        async () => existsSync(ran) && running(`sleep ${seconds}`).length > 0,
        10_000,
        'the command',
      );
      await first.kill();

      if (sandbox === 'bwrap') {
        // bwrap --die-with-parent: the whole sandbox goes with the daemon.
        await waitFor(async () => running(`sleep ${seconds}`).length === 0, 5_000, 'the sandbox to die');
      } else {
        // Unconfined, the command's process group outlives the daemon ...
        await new Promise((r) => setTimeout(r, 300));
        expect(running(`sleep ${seconds}`)).not.toEqual([]);
      }

      // It ran once: started, never finished (the next start removes that worktree).
      expect(readFileSync(ran, 'utf8')).toBe('started\n');
      const before = model.requests.length;
      const second = await serveProcess(s.data, model.url, children, env);
      // ... and the next start kills what is left of it before any run resumes.
      await waitFor(async () => running(`sleep ${seconds}`).length === 0, 5_000, 'the leftover group to die');
      const waiting = await pendingApproval(second, (a) => a.tool_use_id === 'again', 15_000);
      expect(waiting).toMatchObject({ run_id: runId, tool: 'Bash' });
      // The execution started over: a new conversation from the approved plan, in a fresh worktree.
      const restart = model.requests.slice(before)[0]!.body;
      expect(restart.messages).toHaveLength(1);
      expect(JSON.stringify(restart.messages)).not.toContain('long');
      expect(resultFor('long')).toBeUndefined();
      expect(existsSync(ran)).toBe(false);
      // The approval is stored a moment before the run is marked as waiting for it.
      const run = await runUntil(second, runId, ['awaiting_input']);
      expect(run.attempt).toBe(2);
      await second.kill();
    });
  }
});
