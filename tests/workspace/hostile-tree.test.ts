import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/agent/sandbox.js';
import { DEFAULT_BASH_LIMITS, runBash, safeEnv } from '../../src/agent/tools/execute-tools.js';
import type { IsolatedOutcome, Isolation } from '../../src/workspace/isolation.js';
import { sweepTree } from '../../src/workspace/sweep.js';
import {
  commitExecution,
  type ExecutionTree,
  prepareWorktree,
  removeWorktree,
  TreeRefusedError,
} from '../../src/workspace/worktree.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// Nothing on the host interprets a file a sandboxed command could have written (issue 23, point 2). Each
// vector is written by a real command in the real bubblewrap sandbox, then drydock commits the execution as
// it does at the end of every execute phase. Each config names a marker on the host, outside the sandbox:
// were any of them run on the host, by drydock's own git, the marker would appear. Before this change the
// commit ran `git add -A` on the host, which recursed into a nested repository at a gitlink and ran its clean
// filter there, with the daemon's uid and its environment one /proc read away.

const SECRETS = {
  ANTHROPIC_API_KEY: 'sk-ant-hostile-tree-test-0d9f',
  DRYDOCK_ADMIN_TOKEN: 'ddk-admin-hostile-tree-test-77aa',
  GITHUB_TOKEN: 'ghp_hostiletreetest000000000000000000',
  GITHUB_WEBHOOK_SECRET: 'whsec-hostile-tree-test',
};

let tmp: { path: string; remove(): void };
let repo: string;
let base: string;
let marker: string;
let sandbox: Sandbox;
let tree: ExecutionTree;
let seen: IsolatedOutcome[];
const saved: Record<string, string | undefined> = {};

/** The sandbox, recording every output of drydock's own isolated git. */
function recording(s: Sandbox): Isolation {
  return {
    run: async (argv, opts) => {
      const out = await s.run(argv, opts);
      seen.push(out);
      return out;
    },
    handOver: (p) => s.handOver(p),
  };
}

beforeEach(async () => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  seen = [];
  tmp = tempDir('drydock-hostile-tree-');
  repo = join(tmp.path, 'repo');
  marker = join(tmp.path, 'host-marker');
  base = makeRepo(repo, { 'README.md': '# r\n', 'src/a.txt': 'a\n' });
  // A gitlink in the base commit, as a pull request can add one: `mod` names a commit of another repository.
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${base},mod`);
  git(repo, 'commit', '-q', '-m', 'add a gitlink');
  base = git(repo, 'rev-parse', 'HEAD');
  sandbox = new Sandbox({ setting: 'bwrap', hidden: [join(tmp.path, 'data')] });
  expect((await sandbox.status()).state).toBe('bwrap');
  tree = await prepareWorktree(
    repo,
    'pln_hostile',
    base,
    join(tmp.path, 'data', 'worktrees'),
    true,
    false,
    (top) => sandbox.handOver(top),
  );
});

afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  tmp.remove();
});

/** A command in the sandbox, confined as the execute phase confines it. */
async function command(script: string): Promise<string> {
  const c = { cwd: tree.root, writable: [tree.root], readOnly: [tree.commonDir], network: null };
  const r = await runBash(
    { command: script },
    { cwd: c.cwd, ...DEFAULT_BASH_LIMITS, env: safeEnv(process.env), wrap: (x) => sandbox.wrap(c, x) },
  );
  return r.content;
}

const NESTED_GIT = 'git -c user.name=m -c user.email=m@m -c init.defaultBranch=main';

/** A repository in `dir` with one committed file `f`, made stat-dirty afterwards. */
const nestedRepo = (dir: string, config: string) =>
  `mkdir -p ${dir} && cd ${dir} && ${NESTED_GIT} init -q && ${config} && echo data > f && ${NESTED_GIT} add f && ${NESTED_GIT} commit -qm x; touch -d '2001-01-01' f; cd - >/dev/null`;

/**
 * The attack on a gitlink: a repository at `mod` whose HEAD is the commit the gitlink names (fetched from the
 * repository's git directory, which commands may read), with `config` applied and a tracked file made
 * stat-dirty, so that a `git add -A` over the outer tree asks the nested repository whether it changed.
 */
const atGitlink = (config: string) =>
  `git init -q mod && cd mod && git fetch -q ${'$COMMON'} main && git checkout -q FETCH_HEAD~1 && ${config} && touch -d '2001-01-01' README.md; cd - >/dev/null`;

async function commit() {
  return commitExecution(
    tree,
    base,
    { id: 'pln_hostile', sha256: 'f'.repeat(64), title: 'Hostile tree' },
    recording(sandbox),
    join(tmp.path, 'data', 'scratch', 'pln_hostile'),
  );
}

/** The commit goes through or is refused with a reason; never anything else, and never a marker. */
async function commitAndCheck(): Promise<{ refused: string | null }> {
  let refused: string | null = null;
  try {
    await commit();
  } catch (err) {
    if (!(err instanceof TreeRefusedError)) throw err;
    refused = err.message;
  }
  expect(existsSync(marker), 'a command written into the tree ran on the host').toBe(false);
  const outputs = seen.map((o) => o.stdout.toString('latin1') + o.stderr).join('\n');
  for (const secret of Object.values(SECRETS)) expect(outputs).not.toContain(secret);
  return { refused };
}

describe("drydock's commit never runs what the tree holds", () => {
  const vectors: [string, string][] = [
    [
      'a nested repository at a gitlink with a clean filter and a stat-dirty file',
      atGitlink(`git config filter.x.clean "touch ${'$M'}; env; cat" && echo '* filter=x' > .gitattributes`),
    ],
    [
      'a nested repository with a smudge filter',
      atGitlink(`git config filter.x.smudge "touch ${'$M'}; cat" && echo '* filter=x' > .gitattributes`),
    ],
    [
      'a nested repository with a long-running filter process',
      atGitlink(`git config filter.x.process "touch ${'$M'}" && echo '* filter=x' > .gitattributes`),
    ],
    [
      'a nested repository with core.fsmonitor',
      atGitlink(`git config core.fsmonitor "touch ${'$M'}; false"`),
    ],
    [
      'a nested repository with a hooks path of executable hooks',
      `${atGitlink('mkdir -p h && git config core.hooksPath h')} && for n in pre-commit post-checkout post-index-change reference-transaction; do printf '#!/bin/sh\\ntouch $M\\n' > mod/h/$n; chmod +x mod/h/$n; done`,
    ],
    [
      'a nested repository with diff.external and a textconv driver',
      atGitlink(
        `git config diff.external "touch ${'$M'}" && git config diff.x.textconv "touch ${'$M'}; cat" && echo '* diff=x' > .gitattributes`,
      ),
    ],
    [
      'a nested repository whose objects borrow from alternates, with a commondir file',
      `${atGitlink('true')} && mkdir -p mod/.git/objects/info && echo /nonexistent/objects > mod/.git/objects/info/alternates && echo /nonexistent > mod/.git/commondir`,
    ],
    [
      'a new nested repository (not at a gitlink) with a clean filter',
      nestedRepo(
        'fresh',
        `git config filter.x.clean "touch ${'$M'}; cat" && echo '* filter=x' > .gitattributes`,
      ),
    ],
    [
      'a .gitmodules whose submodule update is a command and whose url is an option',
      `printf '[submodule "mod"]\\n\\tpath = mod\\n\\turl = --upload-pack=touch $M\\n\\tupdate = !touch $M\\n' > .gitmodules`,
    ],
    [
      'a .git file at the top of the worktree pointing at a repository the command made',
      `${NESTED_GIT} init -q --bare evil.git && git --git-dir=evil.git config core.fsmonitor "touch ${'$M'}; false" && printf 'gitdir: ./evil.git\\n' > .git && echo changed > src/a.txt`,
    ],
    [
      'a .gitattributes at the top naming filters and drivers the repository does not define',
      `printf '* filter=lfs diff=x merge=y\\n' > .gitattributes && echo changed > src/a.txt`,
    ],
  ];

  for (const [name, script] of vectors) {
    it(name, async () => {
      const out = await command(`export M=${marker} COMMON=${tree.commonDir}; ${script}; echo made`);
      expect(out).toContain('made');
      const { refused } = await commitAndCheck();
      if (refused !== null) expect(refused).toMatch(/./);
    });
  }

  it('a plain change still becomes a commit on the branch, parented on the base, with its stat', async () => {
    const checkout = git(repo, 'status', '--porcelain');
    await command('echo changed > src/a.txt && echo new > src/b.txt && rm README.md');
    const result = await commit();
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(repo, 'rev-parse', 'drydock/pln_hostile')).toBe(result.commit);
    expect(git(repo, 'rev-parse', `${result.commit}^`)).toBe(base);
    expect(git(repo, 'show', `${result.commit}:src/b.txt`)).toBe('new');
    expect(git(repo, 'log', '-1', '--format=%B', result.commit ?? 'none')).toContain(
      'Drydock-Plan: pln_hostile',
    );
    expect(result.changedFiles).toEqual(['README.md', 'src/a.txt', 'src/b.txt']);
    expect(result.diffStat).toMatch(/3 files changed/);
    // The scratch object store is gone; the repository's checkout is untouched.
    expect(existsSync(join(tmp.path, 'data', 'scratch', 'pln_hostile'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe(checkout);
  });

  it('nothing changed: no commit, the branch stays on the base', async () => {
    await command('echo looked');
    const result = await commit();
    expect(result.commit).toBeNull();
    expect(git(repo, 'rev-parse', 'drydock/pln_hostile')).toBe(base);
  });

  it("a .gitmodules git's fsck refuses fails its own execution with the reason", async () => {
    await command(`printf '[submodule "x"]\\n\\tpath = x\\n\\turl = -u./payload\\n' > .gitmodules`);
    await expect(commit()).rejects.toThrow(TreeRefusedError);
    await expect(commit()).rejects.toThrow(
      /refused: .*gitmodulesUrl: disallowed submodule url: -u\.\/payload/,
    );
    expect(git(repo, 'rev-parse', 'drydock/pln_hostile')).toBe(base);
  });

  it("a command cannot write the worktree's administrative files (commondir, gitdir, HEAD, config)", async () => {
    const out = await command(
      `for f in commondir gitdir HEAD; do echo /tmp > ${tree.gitDir}/$f && echo WROTE-$f; done; echo x >> ${tree.commonDir}/config && echo WROTE-config; mkdir ${tree.commonDir}/objects/info 2>/dev/null; echo /tmp >> ${tree.commonDir}/objects/info/alternates && echo WROTE-alternates; echo end`,
    );
    expect(out).toContain('end');
    expect(out).not.toContain('WROTE');
  });

  it('removing the worktree runs no git over it: a hostile tree is deleted as data', async () => {
    await command(
      `export M=${marker} COMMON=${tree.commonDir}; ${atGitlink(`git config core.fsmonitor "touch ${'$M'}; false"`)}; mkdir -p locked/in && touch locked/in/f && chmod 0500 locked/in locked`,
    );
    await removeWorktree(repo, tree.top, 'drydock/pln_hostile');
    expect(existsSync(tree.top)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain('pln_hostile');
    expect(git(repo, 'branch', '--list', 'drydock/*')).toBe('');
  });
});

describe('set-ID bits and special files', () => {
  it('are cleared and removed from the tree before the host reads it again', async () => {
    const out = await command(
      'cp /bin/bash sh-copy && chmod 6755 sh-copy && mkfifo pipe && mkdir -p d && chmod 2775 d && python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind(\'sock\')"; echo end',
    );
    expect(out).toContain('end');
    expect(statSync(join(tree.root, 'sh-copy')).mode & 0o6000).not.toBe(0);
    const report = await sweepTree(tree.root);
    expect(report.cleared.sort()).toEqual(['d', 'sh-copy']);
    expect(report.removed.sort()).toEqual(['pipe', 'sock']);
    expect(statSync(join(tree.root, 'sh-copy')).mode & 0o7777).toBe(0o755);
    expect(readdirSync(tree.root)).not.toContain('pipe');
  });

  it('worktrees live in a directory only the daemon user can enter', () => {
    expect(statSync(join(tmp.path, 'data', 'worktrees')).mode & 0o777).toBe(0o700);
  });
});

describe('what a test here can see', () => {
  it('the markers would appear if run on the host (the vectors are live)', async () => {
    // Run the first vector's filter with a plain, unhardened git on the host: the marker appears. This is
    // what the checks above would see if drydock's commit interpreted the tree.
    await command(nestedRepo('mod', 'true'));
    mkdirSync(join(tmp.path, 'probe'), { recursive: true });
    writeFileSync(join(tmp.path, 'probe', 'cmd.sh'), `#!/bin/sh\ntouch ${marker}\ncat\n`);
    chmodSync(join(tmp.path, 'probe', 'cmd.sh'), 0o755);
    const nested = join(tree.root, 'mod');
    git(nested, '-c', 'safe.directory=*', 'config', 'filter.x.clean', join(tmp.path, 'probe', 'cmd.sh'));
    writeFileSync(join(nested, '.gitattributes'), '* filter=x\n');
    git(nested, '-c', 'safe.directory=*', 'status', '--porcelain');
    expect(existsSync(marker)).toBe(true);
  });
});
