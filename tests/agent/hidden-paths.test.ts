import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEdit } from '../../src/agent/tools/edit.js';
import { runGlob } from '../../src/agent/tools/glob.js';
import { runGrep } from '../../src/agent/tools/grep.js';
import { DEFAULT_EXEC_LIMITS, DEFAULT_TOOL_LIMITS } from '../../src/agent/tools/limits.js';
import { runRead } from '../../src/agent/tools/read.js';
import { Workspace } from '../../src/agent/tools/workspace.js';
import { runWrite } from '../../src/agent/tools/write.js';
import { StartError } from '../../src/preflight.js';
import { type HiddenPaths, hiddenPaths } from '../../src/workspace/hidden.js';
import { expectError, sessionCount } from '../http/helpers.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { createHarness, type Harness, tempDir, testConfig } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// The attack (issue 23, point 5): `cd repo && drydock serve` keeps the data directory (./data) and perhaps the
// configuration file inside the repository, and a session on the repository let the model's file tools list
// the database, read the config's keys and, in `edits` mode, rewrite the config to `execute.sandbox: off`.
// One list of hidden paths now holds for commands and every file tool; a workspace holding one of them is
// refused when named, and a daemon whose data directory lies in an open session's workspace does not start.

const SECRET = 'sk-ant-SECRET-0123456789';
const CONFIG_TEXT = `anthropic:\n  api_key: ${SECRET}\nexecute:\n  sandbox: bwrap\n`;

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});
function temp(): string {
  const d = tempDir('drydock-hidden-');
  dirs.push(d);
  return d.path;
}

/** A real git repository holding drydock's data directory, work directory and configuration file. */
function attackedRepo(): { repo: string; hidden: HiddenPaths; configFile: string } {
  const repo = join(temp(), 'repo');
  makeRepo(repo, { 'src/app.ts': 'export const app = 1;\n', 'README.md': '# app\n' });
  const configFile = join(repo, 'drydock.yaml');
  writeFileSync(configFile, CONFIG_TEXT);
  mkdirSync(join(repo, 'data', 'worktrees', 'pln_other'), { recursive: true });
  writeFileSync(join(repo, 'data', 'drydock.db'), `SQLite format 3 ${SECRET}\n`);
  writeFileSync(join(repo, 'data', 'worktrees', 'pln_other', 'notes.txt'), `other plan ${SECRET}\n`);
  mkdirSync(join(repo, 'work', 'checkouts', 'run_1'), { recursive: true });
  writeFileSync(join(repo, 'work', 'checkouts', 'run_1', 'pr.txt'), `a checkout ${SECRET}\n`);
  // Links into the hidden paths: the real path decides, not the name.
  symlinkSync('drydock.yaml', join(repo, 'config-link.yaml'));
  symlinkSync('data', join(repo, 'data-link'));
  const config = testConfig(join(repo, 'data'), (c) => {
    c.work_dir = join(repo, 'work');
  });
  return { repo, hidden: hiddenPaths(config, configFile), configFile };
}

describe('file tools refuse the hidden paths', () => {
  let repo: string;
  let configFile: string;
  let ws: Workspace;

  beforeEach(async () => {
    const made = attackedRepo();
    repo = made.repo;
    configFile = made.configFile;
    ws = await Workspace.open(repo, made.hidden);
  });

  it('Read refuses the data directory, the work directory and the config file, by name, link or absolute path', async () => {
    const refused: [string, string][] = [
      ['drydock.yaml', "drydock's configuration file"],
      ['config-link.yaml', "drydock's configuration file"],
      [configFile, "drydock's configuration file"],
      ['data/drydock.db', "drydock's data directory"],
      ['data-link/drydock.db', "drydock's data directory"],
      ['data/worktrees/pln_other/notes.txt', "drydock's data directory"],
      ['src/../data/drydock.db', "drydock's data directory"],
      ['work/checkouts/run_1/pr.txt', "drydock's work directory"],
    ];
    for (const [path, what] of refused) {
      const r = await runRead(ws, { file_path: path }, DEFAULT_TOOL_LIMITS);
      expect(r.isError, path).toBe(true);
      expect(r.content, path).toContain(what);
      expect(r.content, path).toContain('never read or change');
      expect(r.content).not.toContain(SECRET);
      expect(r.content).not.toContain(repo);
    }
    // The rest of the repository reads as before.
    const ok = await runRead(ws, { file_path: 'src/app.ts' }, DEFAULT_TOOL_LIMITS);
    expect(ok).toEqual({ content: '     1\texport const app = 1;', isError: false });
  });

  it('Glob never lists them, nor starts a walk inside them', async () => {
    const all = await runGlob(ws, { pattern: '**/*' }, DEFAULT_TOOL_LIMITS);
    expect(all.isError).toBe(false);
    expect(all.content.split('\n').sort()).toEqual(['README.md', 'src/app.ts']);
    for (const pattern of ['data/**/*', 'work/**', 'data/*.db', '*.yaml']) {
      const r = await runGlob(ws, { pattern }, DEFAULT_TOOL_LIMITS);
      expect(r.content, pattern).toBe('No files found');
    }
    const inside = await runGlob(ws, { pattern: '**/*', path: 'data' }, DEFAULT_TOOL_LIMITS);
    expect(inside.isError).toBe(true);
    expect(inside.content).toContain("drydock's data directory");
  });

  it('Grep never searches them, whatever path or glob it is given', async () => {
    for (const input of [
      { pattern: 'SECRET', output_mode: 'content' as const },
      { pattern: 'SECRET', glob: '**/*' },
      { pattern: 'SECRET', '-i': true, output_mode: 'count' as const },
    ]) {
      const r = await runGrep(ws, input, DEFAULT_TOOL_LIMITS);
      expect(r.isError).toBe(false);
      expect(r.content.split('\n')[0]).toBe('No matches found');
    }
    for (const path of ['data', 'drydock.yaml', 'config-link.yaml', 'data-link', 'work/checkouts']) {
      const r = await runGrep(ws, { pattern: 'SECRET', path }, DEFAULT_TOOL_LIMITS);
      expect(r.isError, path).toBe(true);
      expect(r.content).toMatch(/drydock's (data directory|work directory|configuration file)/);
      expect(r.content).not.toContain(SECRET);
    }
  });

  it('Write and Edit refuse them and leave them as they were', async () => {
    const off = 'execute:\n  sandbox: off\n';
    for (const path of ['drydock.yaml', 'config-link.yaml', configFile]) {
      const w = await runWrite(ws, { file_path: path, content: off }, DEFAULT_EXEC_LIMITS);
      expect(w.isError, path).toBe(true);
      expect(w.content).toContain("drydock's configuration file");
      const e = await runEdit(
        ws,
        { file_path: path, old_string: 'sandbox: bwrap', new_string: 'sandbox: off' },
        DEFAULT_EXEC_LIMITS,
      );
      expect(e.isError, path).toBe(true);
      expect(e.content).toContain("drydock's configuration file");
    }
    expect(readFileSync(configFile, 'utf8')).toBe(CONFIG_TEXT);
    for (const path of ['data/new.txt', 'data-link/drydock.db', 'data/worktrees/pln_2/x.ts', 'work/x']) {
      const w = await runWrite(ws, { file_path: path, content: 'x' }, DEFAULT_EXEC_LIMITS);
      expect(w.isError, path).toBe(true);
      expect(w.content).toMatch(/drydock's (data|work) directory/);
    }
    expect(readFileSync(join(repo, 'data', 'drydock.db'), 'utf8')).toContain('SQLite format 3');
    const ok = await runWrite(ws, { file_path: 'src/new.ts', content: 'x\n' }, DEFAULT_EXEC_LIMITS);
    expect(ok.isError).toBe(false);
  });

  it("Write and Edit refuse the repository's git directory, under any name", async () => {
    // `.git` itself, as before.
    const dotGit = await runWrite(
      ws,
      { file_path: '.git/hooks/pre-commit', content: 'x' },
      DEFAULT_EXEC_LIMITS,
    );
    expect(dotGit.isError).toBe(true);
    // A git directory that is not called `.git`: a bare clone kept in the tree.
    git(repo, 'clone', '-q', '--bare', repo, join(repo, 'vendor', 'mirror.git'));
    const bare = await runWrite(
      ws,
      { file_path: 'vendor/mirror.git/hooks/post-update', content: '#!/bin/sh\nid\n' },
      DEFAULT_EXEC_LIMITS,
    );
    expect(bare.isError).toBe(true);
    expect(bare.content).toContain('inside a git directory');
    // A workspace opened on the git directory itself (a session named `repo/.git`): every change is refused,
    // `config` (core.fsmonitor runs a program for the next person's git) above all.
    const inGit = await Workspace.open(join(repo, '.git'));
    const config = await runEdit(
      inGit,
      { file_path: 'config', old_string: '[core]', new_string: '[core]\n\tfsmonitor = /tmp/evil' },
      DEFAULT_EXEC_LIMITS,
    );
    expect(config.isError).toBe(true);
    expect(config.content).toContain('inside a git directory');
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
    // A worktree's git directory lies outside the worktree: refused as outside.
    git(repo, 'worktree', 'add', '-q', join(dirname(repo), 'wt'));
    const wt = await Workspace.open(join(dirname(repo), 'wt'));
    const gitFile = await runWrite(wt, { file_path: '.git', content: 'gitdir: /tmp\n' }, DEFAULT_EXEC_LIMITS);
    expect(gitFile.isError).toBe(true);
    const admin = await runWrite(
      wt,
      { file_path: join(repo, '.git', 'worktrees', 'wt', 'HEAD'), content: 'x' },
      DEFAULT_EXEC_LIMITS,
    );
    expect(admin.isError).toBe(true);
  });
});

describe('a plan run in a workspace that holds the data directory', () => {
  let model: ModelServer;
  let d: TestDaemon;

  afterEach(async () => {
    await d?.stop();
    await model?.close();
  });

  it("never shows the model the database or the config's keys (a session made before the check)", async () => {
    const repo = join(temp(), 'repo');
    makeRepo(repo, { 'src/app.ts': 'export const app = 1;\n', 'drydock.yaml': CONFIG_TEXT });
    symlinkSync('drydock.yaml', join(repo, 'config-link.yaml'));
    // Committed: the plan run reads a clean checkout of the commit, where the copies stay hidden too.
    git(repo, 'add', 'config-link.yaml');
    git(repo, 'commit', '-q', '-m', 'a link to the configuration');
    model = await startModelServer();
    // `cd repo && drydock serve --config drydock.yaml`: data_dir is ./data, inside the repository.
    d = await startTestDaemon({ modelUrl: model.url, dir: repo, configFile: join(repo, 'drydock.yaml') });
    writeFileSync(join(repo, 'data', 'notes.txt'), `${SECRET}\n`);
    // The API refuses such a session now; one stored by an older drydock still runs, and sees nothing hidden.
    const session = await d.daemon.store.createSession({
      id: 'ses_old',
      name: 'old',
      workspace: repo,
      owner: 'admin',
      defaults: {},
      createdAt: Date.now(),
    });
    const usage = { input_tokens: 10, output_tokens: 10 };
    model.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '**/*' } },
          { type: 'tool_use', id: 'toolu_db', name: 'Glob', input: { pattern: 'data/*' } },
          {
            type: 'tool_use',
            id: 'toolu_grep',
            name: 'Grep',
            input: { pattern: 'SECRET', output_mode: 'content' },
          },
          { type: 'tool_use', id: 'toolu_cfg', name: 'Read', input: { file_path: 'drydock.yaml' } },
          { type: 'tool_use', id: 'toolu_link', name: 'Read', input: { file_path: 'config-link.yaml' } },
          { type: 'tool_use', id: 'toolu_notes', name: 'Read', input: { file_path: 'data/notes.txt' } },
        ],
        usage,
      },
      {
        kind: 'message',
        content: [
          { type: 'tool_use', id: 'toolu_plan', name: 'ExitPlanMode', input: { plan: '## Nothing\n' } },
        ],
        usage,
      },
    );
    const job = await d.api('POST', `/v1/sessions/${session.id}/jobs`, { cron: '0 9 * * *', prompt: 'look' });
    expect(job.status).toBe(201);
    const fired = await d.api('POST', `/v1/jobs/${job.body.id}/run`);
    expect(fired.status).toBe(201);
    await waitFor(
      async () => (await d.api('GET', `/v1/runs/${fired.body.id}`)).body.status === 'planned',
      10_000,
      'the run to plan',
    );
    const results = model.requests
      .at(-1)!
      .body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: any) => b.type === 'tool_result');
    const byId = Object.fromEntries(results.map((r: any) => [r.tool_use_id, r]));
    expect(byId.toolu_glob.content.split('\n').sort()).toEqual(['src/app.ts']);
    expect(byId.toolu_db.content).toBe('No files found');
    expect(byId.toolu_grep.content).toBe('No matches found');
    for (const id of ['toolu_cfg', 'toolu_link', 'toolu_notes']) {
      expect(byId[id].is_error, id).toBe(true);
      expect(byId[id].content, id).toMatch(/drydock's (configuration file|data directory)/);
    }
    expect(JSON.stringify(results)).not.toContain(SECRET);
  });
});

describe('a workspace holding a hidden path is refused when it is named', () => {
  let h: Harness;
  let configDir: string;

  beforeEach(async () => {
    configDir = temp();
    writeFileSync(join(configDir, 'drydock.yaml'), CONFIG_TEXT);
    h = await createHarness({ configFile: join(configDir, 'drydock.yaml') });
  });
  afterEach(async () => {
    await h.close();
  });

  async function refused(workspace: string): Promise<string> {
    const res = await h.call('POST', '/v1/sessions', { body: { workspace } });
    return expectError(res, 422, 'invalid_workspace').message;
  }

  it('POST /v1/sessions: 422 for a workspace holding the data directory or the config file, inside one, or /', async () => {
    const data = h.config.data_dir;
    expect(await refused(h.dir)).toBe(
      `workspace ${h.dir} holds drydock's data directory ${data}, which the model must never read or change: move data_dir (DRYDOCK_DATA_DIR, --data-dir) out of it, with its contents, or name a directory that does not hold it`,
    );
    expect(await refused(configDir)).toBe(
      `workspace ${configDir} holds drydock's configuration file ${join(configDir, 'drydock.yaml')}, which the model must never read or change: move the configuration file (--config, DRYDOCK_CONFIG) out of it, or name a directory that does not hold it`,
    );
    expect(await refused('/')).toBe(
      "workspace / is the whole file system: it holds drydock's own files and every other workspace; name the repository's own directory",
    );
    expect(await refused(data)).toContain(`holds drydock's data directory ${data}`);
    mkdirSync(join(data, 'mine'));
    expect(await refused(join(data, 'mine'))).toBe(
      `workspace ${join(data, 'mine')} lies inside drydock's data directory ${data}, which the model must never read or change: name a directory outside it`,
    );
    // By real path: a symbolic link to the directory is no way around it.
    const link = join(temp(), 'innocent');
    symlinkSync(h.dir, link);
    expect(await refused(link)).toBe(
      `workspace ${link} (really ${h.dir}) holds drydock's data directory ${data}, which the model must never read or change: move data_dir (DRYDOCK_DATA_DIR, --data-dir) out of it, with its contents, or name a directory that does not hold it`,
    );
    expect(await sessionCount(h)).toBe(0);
    // The workspace beside the data directory is fine.
    expect((await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } })).status).toBe(201);
  });

  it('triggers: 422 for such a workspace, when created and when changed', async () => {
    const body = { kind: 'generic', name: 'nightly', prompt: 'check the build', workspace: h.dir };
    const created = await h.call('POST', '/v1/triggers', { body, role: 'admin' });
    expect(expectError(created, 422, 'invalid_workspace').message).toContain(
      `holds drydock's data directory ${h.config.data_dir}`,
    );
    const ok = await h.call('POST', '/v1/triggers', {
      body: { ...body, workspace: h.workspace },
      role: 'admin',
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const changed = await h.call('PATCH', `/v1/triggers/${ok.body.trigger?.id ?? ok.body.id}`, {
      body: { workspace: configDir },
      role: 'admin',
    });
    expect(expectError(changed, 422, 'invalid_workspace').message).toContain(
      "holds drydock's configuration file",
    );
  });
});

/** The error a start fails with; a start that does not fail is stopped and fails the test. */
async function startFailure(opts: Parameters<typeof startTestDaemon>[0]): Promise<Error> {
  const started = await startTestDaemon(opts).catch((err: Error) => err);
  if (started instanceof Error) return started;
  await started.stop();
  throw new Error('the daemon started');
}

describe('the daemon does not start with its data directory in a workspace', () => {
  it("refuses when the data directory lies inside an open session's workspace, naming the session", async () => {
    const base = temp();
    const repo = join(base, 'repo');
    mkdirSync(repo);
    const first = await startTestDaemon({ dir: base });
    const session = await first.api('POST', '/v1/sessions', { workspace: repo });
    expect(session.status).toBe(201);
    await first.halt();
    // The operator moves the data directory into the repository (or starts drydock there with ./data).
    const data = join(repo, 'data');
    renameSync(join(base, 'data'), data);
    const failure = await startFailure({
      patch: (c) => {
        c.data_dir = data;
      },
    });
    expect(failure).toBeInstanceOf(StartError);
    expect(failure.message).toBe(
      `data directory ${data} lies inside ${repo}, the workspace of open session ${session.body.id}: the model of that session could read and change it; move data_dir (DRYDOCK_DATA_DIR, --data-dir) out of ${repo}, with its contents (then close the session if it is not wanted)`,
    );
    // Moved back out, the same database starts again.
    renameSync(data, join(base, 'data'));
    const again = await startTestDaemon({ dir: base });
    await again.halt();
  });

  it('refuses when a github repository mapping holds the data directory', async () => {
    const repo = temp();
    const failure = await startFailure({
      dir: repo,
      patch: (c) => {
        c.github.repositories = { 'acme/app': { path: repo } };
      },
    });
    expect(failure).toBeInstanceOf(StartError);
    expect(failure.message).toBe(
      `data directory ${join(repo, 'data')} lies inside ${repo}, the clone of github.repositories.acme/app: the model of its pull requests' runs could read and change it; move data_dir (DRYDOCK_DATA_DIR, --data-dir) out of ${repo}, with its contents (or map acme/app to a clone elsewhere)`,
    );
  });
});
