import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Confinement, Sandbox } from '../../src/agent/sandbox.js';
import { DEFAULT_BASH_LIMITS, runBash, safeEnv } from '../../src/agent/tools/execute-tools.js';
import { sweepTree } from '../../src/workspace/sweep.js';
import { commitExecution, prepareWorktree } from '../../src/workspace/worktree.js';
import { ms, p50p99, summarize, table } from '../shared/stats.js';

// Sandbox benchmark (figures, not a test): what the sandbox adds to one Bash command, beside the same command
// run unconfined in the same run; the sweep of a worktree after a command; and an execution's commit made in
// the sandbox (git add and write-tree there, the pack checked by the host) beside the plain host-side
// `git add -A && git commit` drydock used before. Targets: the sandbox start adds <= 50 ms at the median.
//
//   npm run bench:sandbox [-- --runs N] [-- --files N]
// Exit code 1 when the target is missed or the sandbox does not work here.

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 60);
const FILES = arg('files', 2_000);

async function timeCommands(root: string, sandbox: Sandbox | null): Promise<number[]> {
  const c: Confinement = { cwd: root, writable: [root], readOnly: [], network: null };
  const times: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    const t0 = performance.now();
    const r = await runBash(
      { command: 'true' },
      {
        cwd: root,
        ...DEFAULT_BASH_LIMITS,
        env: safeEnv(process.env),
        ...(sandbox ? { wrap: (x: string) => sandbox.wrap(c, x) } : {}),
      },
    );
    if (r.exitCode !== 0) throw new Error(`the command failed: ${r.content}`);
    if (i >= 5) times.push(performance.now() - t0); // five warm-up runs
  }
  return times;
}

function makeTree(dir: string): void {
  for (let i = 0; i < FILES; i++) {
    const sub = join(dir, `d${i % 40}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.txt`), `line ${i}\n`);
  }
}

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

async function commitTimes(tmp: string, sandbox: Sandbox): Promise<{ isolated: number[]; host: number[] }> {
  const repo = join(tmp, 'repo');
  makeTree(repo);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'base');
  const base = git(repo, 'rev-parse', 'HEAD');
  const isolated: number[] = [];
  const host: number[] = [];
  for (let i = 0; i < 8; i++) {
    const tree = await prepareWorktree(repo, `pln_${i}`, base, join(tmp, 'worktrees'), false, false, (top) =>
      sandbox.handOver(top),
    );
    writeFileSync(join(tree.top, 'd1', `new${i}.txt`), 'new\n');
    writeFileSync(join(tree.top, 'd2', 'f2.txt'), `changed ${i}\n`);
    let t0 = performance.now();
    await commitExecution(
      tree,
      base,
      { id: `pln_${i}`, sha256: 'f'.repeat(64), title: 'bench' },
      sandbox,
      join(tmp, 'scratch', `pln_${i}`),
    );
    isolated.push(performance.now() - t0);
    // The same change committed the way drydock did before, on the host, in a second worktree.
    const plain = join(tmp, `host-${i}`);
    git(repo, 'worktree', 'add', '-q', '-b', `host-${i}`, plain, base);
    writeFileSync(join(plain, 'd1', `new${i}.txt`), 'new\n');
    writeFileSync(join(plain, 'd2', 'f2.txt'), `changed ${i}\n`);
    t0 = performance.now();
    git(plain, 'add', '-A');
    git(plain, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'bench');
    host.push(performance.now() - t0);
  }
  return { isolated, host };
}

async function main(): Promise<number> {
  const tmp = mkdtempSync(join(tmpdir(), 'drydock-bench-sandbox-'));
  try {
    const sandbox = new Sandbox({ setting: 'bwrap' });
    const status = await sandbox.status();
    if (status.state !== 'bwrap') {
      process.stderr.write(`the sandbox does not work here: ${status.detail}\n`);
      return 1;
    }
    const root = join(tmp, 'worktree');
    makeTree(root);
    await sandbox.handOver(root);
    const bare = summarize(await timeCommands(root, null));
    const boxed = summarize(await timeCommands(root, sandbox));
    const sweeps: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await sweepTree(root);
      sweeps.push(performance.now() - t0);
    }
    const sweep = summarize(sweeps);
    const commits = await commitTimes(tmp, sandbox);
    const added = boxed.p50 - bare.p50;
    const uid = sandbox.runAs ? `as uid ${sandbox.runAs.uid} (daemon is root)` : 'in a user namespace';
    process.stdout.write(
      `${table([
        ['what', 'p50 / p99', 'beside'],
        ['`true`, unconfined (baseline)', p50p99(bare), ''],
        [`\`true\` in the sandbox, ${uid}`, p50p99(boxed), `+${ms(added)} at p50 (target <= 50 ms)`],
        [`sweep of a ${FILES}-file worktree`, p50p99(sweep), 'after each command'],
        [
          'commit: git add + write-tree in the sandbox, pack checked by the host',
          p50p99(summarize(commits.isolated)),
          `host git add + commit (before): ${p50p99(summarize(commits.host))}`,
        ],
      ])}\n`,
    );
    const pass = added <= 50;
    process.stdout.write(`sandbox start: ${pass ? 'PASS' : 'FAIL'} (${RUNS} runs each, ${FILES} files)\n`);
    return pass ? 0 : 1;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(2);
  },
);
