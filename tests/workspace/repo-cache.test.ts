import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkoutPullRequest, removeCheckout } from '../../src/workspace/checkout.js';
import {
  configuredClone,
  RepoCache,
  RepoCacheError,
  type RepoCacheOptions,
  type Want,
} from '../../src/workspace/repo-cache.js';
import { type GitHttp, startGitHttp } from '../support/git-http.js';
import { git } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// The clone cache against a real git smart-HTTP remote (git http-backend, tests/support/git-http.ts) that asks
// for credentials as GitHub does.

const REPO = 'acme/widgets';

let s: GitHttp;
let tmp: { path: string; remove(): void };
let work: string;

beforeEach(async () => {
  s = await startGitHttp();
  tmp = tempDir('drydock-repo-cache-');
  work = join(tmp.path, 'work');
});
afterEach(async () => {
  await s.close();
  tmp.remove();
});

const cacheOf = (over: Partial<RepoCacheOptions> = {}) =>
  new RepoCache({
    root: work,
    baseUrl: s.url,
    credentials: async () => ({ username: 'x-access-token', password: s.token }),
    timeoutMs: 20_000,
    maxBytes: 50_000_000,
    ...over,
  });

/** `REPO` on the remote: main, a pull request head (refs/pull/2/head) and a branch `other`. */
function remote() {
  const bare = s.repository(REPO);
  const seed = join(tmp.path, 'seed');
  git(tmp.path, 'init', '-q', '-b', 'main', seed);
  const commit = (files: Record<string, string | Buffer>, message: string) => {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(seed, path)), { recursive: true });
      writeFileSync(join(seed, path), content);
    }
    git(seed, 'add', '-A');
    git(seed, 'commit', '-q', '-m', message);
    return git(seed, 'rev-parse', 'HEAD');
  };
  const main = commit({ 'README.md': '# widgets\n' }, 'initial');
  git(seed, 'push', '-q', bare, 'main');
  git(seed, 'checkout', '-q', '-b', 'other');
  commit({ 'other.txt': 'other\n' }, 'other');
  git(seed, 'push', '-q', bare, 'other');
  /** A new commit on top of the pull request's head (or of main), pushed to refs/pull/2/head. */
  const pushHead = (files: Record<string, string | Buffer>, on: 'head' | 'main' = 'head') => {
    git(seed, 'checkout', '-q', '-B', 'pr', on === 'head' && existsHead() ? 'pr' : 'main');
    const sha = commit(files, 'pull request');
    git(seed, 'push', '-q', '-f', bare, 'pr:refs/pull/2/head');
    return sha;
  };
  const existsHead = () => {
    try {
      git(seed, 'rev-parse', '--verify', '-q', 'refs/heads/pr');
      return true;
    } catch {
      return false;
    }
  };
  return { bare, main, pushHead };
}

const prWants = (head: string, base: string | null = null): Want[] => [
  { ref: 'refs/pull/2/head', commit: head },
  { ref: 'refs/heads/main', commit: base, optional: true },
];

const incoming = () => {
  const dir = join(work, 'repos', '.incoming');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('names from webhook payloads', () => {
  const hostile = [
    '../../../../tmp/x',
    'acme/../../x',
    'acme/..',
    'acme/.',
    '../widgets',
    'acme/widgets/extra',
    '/acme/widgets',
    'acme/',
    '-oProxyCommand=touch x/widgets',
    'acme/-u',
    'acme/--upload-pack=touch pwned',
    '--/widgets',
    'acme/widgets.git',
    'acme\\..\\x',
    'ac me/widgets',
    'acme/widgets\n',
    'acme/wídgets',
    '',
  ];

  it('a name that is not a plain owner/repo is refused before it reaches a path or git', async () => {
    const cache = cacheOf();
    for (const name of hostile) {
      expect(() => cache.pathOf(name), name).toThrow(RepoCacheError);
      await expect(cache.prepare(name, prWants('a'.repeat(40))), name).rejects.toThrow(/refusing to clone/);
    }
    // Nothing was made anywhere (the work root itself neither), and the remote heard nothing.
    expect(readdirSync(tmp.path)).toEqual([]);
    expect(s.requests).toEqual([]);
  });

  it('plain names map inside <root>/repos, one cache however the name is spelled', () => {
    const cache = cacheOf();
    const path = join(work, 'repos', 'acme', 'widgets.git');
    expect(cache.pathOf('acme/widgets')).toBe(path);
    expect(cache.pathOf('ACME/Widgets')).toBe(path);
    expect(cache.pathOf('acme/.github')).toBe(join(work, 'repos', 'acme', '.github.git'));
    expect(cache.pathOf('a-b/c_d.e-f')).toBe(join(work, 'repos', 'a-b', 'c_d.e-f.git'));
    expect(cache.holds('Acme/Widgets', path)).toBe(true);
    expect(cache.holds('acme/widgets', join(tmp.path, 'clone'))).toBe(false);
    expect(cache.holds('../x', path)).toBe(false);
  });

  it('a configured clone is found whatever the case of the name; one configured for another name is not', () => {
    const repositories = {
      'Acme/Widgets': { path: '/srv/widgets' },
      'acme/gadgets': { path: '/srv/gadgets' },
    };
    expect(configuredClone(repositories, 'Acme/Widgets')).toBe('/srv/widgets');
    expect(configuredClone(repositories, 'acme/widgets')).toBe('/srv/widgets');
    expect(configuredClone(repositories, 'ACME/GADGETS')).toBe('/srv/gadgets');
    expect(configuredClone(repositories, 'acme/other')).toBeUndefined();
    expect(configuredClone(repositories, 'constructor')).toBeUndefined();
  });

  it('a ref or commit that could be read as an option or a path is refused before git runs', async () => {
    remote();
    const cache = cacheOf();
    const refs = [
      '--upload-pack=touch /tmp/pwned',
      'refs/heads/--upload-pack=touch /tmp/pwned',
      'refs/heads/-x',
      'refs/heads/../../../x',
      'refs/heads/a..b',
      'refs/heads/x.lock',
      'refs/heads/.hidden',
      'refs/heads/x.',
      'refs/heads/a b',
      'refs/heads/',
      'refs/pull/0/head',
      'refs/pull/2/head/../../x',
      'refs/remotes/origin/main',
      'HEAD',
    ];
    for (const ref of refs) {
      await expect(cache.prepare(REPO, [{ ref }]), ref).rejects.toThrow(
        /refusing to fetch acme\/widgets ref/,
      );
    }
    for (const commit of ['--upload-pack=x', 'HEAD', 'abc123', `${'a'.repeat(40)} x`]) {
      await expect(cache.prepare(REPO, [{ commit }]), commit).rejects.toThrow(
        /refusing to fetch acme\/widgets commit/,
      );
    }
    expect(s.requests).toEqual([]);
    expect(existsSync(join(work, 'repos', 'acme', 'widgets.git'))).toBe(false);
  });
});

describe('cloned on first use, fetched after', () => {
  it('a bare clone with no hooks and only the refs asked for; the next run fetches into it, offering what it has', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'first\n' });
    const cache = cacheOf();
    const path = await cache.prepare(REPO, prWants(head, r.main));
    expect(path).toBe(join(work, 'repos', 'acme', 'widgets.git'));
    expect(git(path, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(existsSync(join(path, 'hooks'))).toBe(false);
    expect(git(path, 'remote', 'get-url', 'origin')).toBe(`${s.url}/acme/widgets.git`);
    expect(git(path, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').sort()).toEqual([
      `refs/drydock/pull/2/head ${head}`,
      `refs/remotes/origin/main ${r.main}`,
    ]);
    // A clone: one fetch that wanted commits and had none to offer.
    expect(s.fetches(REPO)).toMatchObject([{ haves: 0, user: 'x-access-token' }]);
    expect(s.fetches(REPO)[0]!.wants).toBeGreaterThan(0);
    const inode = statSync(path).ino;

    const next = r.pushHead({ 'feature.txt': 'second\n' });
    expect(await cache.prepare(REPO, prWants(next, r.main))).toBe(path);
    expect(git(path, 'rev-parse', 'refs/drydock/pull/2/head')).toBe(next);
    // A fetch into the same directory, not a second clone: it offered the commits it had.
    const fetches = s.fetches(REPO);
    expect(fetches).toHaveLength(2);
    expect(fetches[1]!.haves).toBeGreaterThan(0);
    expect(statSync(path).ino).toBe(inode);
    expect(incoming()).toEqual([]);
  });

  it('a commit its ref no longer brings is fetched by id; one the remote does not have fails, naming it', async () => {
    const r = remote();
    // The pull request's first head, kept on a branch; its head ref then moved to a commit beside it.
    const first = r.pushHead({ 'feature.txt': 'first\n' });
    git(r.bare, 'update-ref', 'refs/heads/keep', first);
    r.pushHead({ 'feature.txt': 'second\n' }, 'main');
    const cache = cacheOf();
    const path = await cache.prepare(REPO, prWants(first));
    expect(git(path, 'cat-file', '-t', first)).toBe('commit');

    const ghost = randomBytes(20).toString('hex');
    const err = await cache.prepare(REPO, prWants(ghost)).catch((e) => e);
    expect(err).toBeInstanceOf(RepoCacheError);
    expect(err.message).toContain('fetching acme/widgets');
    expect(err.message).toContain(ghost);
  });

  it('an optional branch the remote lacks is skipped; the pull request head still comes', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    const path = await cacheOf().prepare(REPO, [
      { ref: 'refs/pull/2/head', commit: head },
      { ref: 'refs/heads/gone', optional: true },
    ]);
    expect(git(path, 'rev-parse', 'refs/drydock/pull/2/head')).toBe(head);
  });
});

describe('credentials', () => {
  it('refused credentials fail the clone with a message naming the repository, never the token; nothing is left', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    const wrong = 'ghp_WRONGtoken0123456789abcdefghijklmnop';
    const cache = cacheOf({ credentials: async () => ({ username: 'x-access-token', password: wrong }) });
    const err = await cache.prepare(REPO, prWants(head)).catch((e) => e);
    expect(err).toBeInstanceOf(RepoCacheError);
    expect(err.message).toMatch(
      /^cloning acme\/widgets from http:\/\/127\.0\.0\.1:\d+\/acme\/widgets\.git failed: /,
    );
    expect(err.message).toContain('the credentials for it were refused');
    expect(err.message).not.toContain(wrong);
    expect(s.requests.every((q) => q.status === 401)).toBe(true);
    expect(existsSync(join(work, 'repos', 'acme', 'widgets.git'))).toBe(false);
    expect(incoming()).toEqual([]);
  });

  it('without credentials a repository that needs them fails saying none are configured', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    const err = await cacheOf({ credentials: async () => undefined })
      .prepare(REPO, prWants(head))
      .catch((e) => e);
    expect(err.message).toContain(
      'it needs credentials, and none are configured (github.token or github.app)',
    );
  });

  it('the token is on no command line while git talks to the remote', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    const held = s.hold(/^GET \/acme\/widgets\.git\/info\/refs/);
    const done = cacheOf().prepare(REPO, prWants(head));
    await held.reached;
    const lines: string[] = [];
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        lines.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
      } catch {
        // gone meanwhile
      }
    }
    held.release();
    await done;
    // git was talking to the remote (its helper's command line names the URL) ...
    expect(lines.some((l) => l.includes(`${s.url}/acme/widgets.git`))).toBe(true);
    // ... and no command line holds the token.
    expect(lines.filter((l) => l.includes(s.token))).toEqual([]);
  });
});

describe('limits', () => {
  it('a repository larger than max_bytes: the clone is stopped and nothing of it is left', async () => {
    const r = remote();
    const head = r.pushHead({ 'big.bin': randomBytes(2_000_000) });
    const err = await cacheOf({ maxBytes: 500_000 })
      .prepare(REPO, prWants(head))
      .catch((e) => e);
    expect(err).toBeInstanceOf(RepoCacheError);
    expect(err.message).toContain('cloning acme/widgets');
    expect(err.message).toContain('larger than github.clone.max_bytes (500000 bytes)');
    expect(existsSync(join(work, 'repos', 'acme', 'widgets.git'))).toBe(false);
    expect(incoming()).toEqual([]);
  });

  it('a cache a fetch took past max_bytes fails that run and the next, saying how to go on', async () => {
    const r = remote();
    const small = r.pushHead({ 'feature.txt': 'x\n' });
    const path = await cacheOf().prepare(REPO, prWants(small));
    const big = r.pushHead({ 'big.bin': randomBytes(2_000_000) });
    const limited = cacheOf({ maxBytes: 1_000_000 });
    const first = await limited.prepare(REPO, prWants(big)).catch((e) => e);
    expect(first.message).toContain('fetching acme/widgets');
    expect(first.message).toContain('larger than github.clone.max_bytes (1000000 bytes)');
    const fetches = s.fetches(REPO).length;
    const again = await limited.prepare(REPO, prWants(big)).catch((e) => e);
    expect(again.message).toContain(`remove ${path} to clone it again`);
    // Refused before asking the remote again.
    expect(s.fetches(REPO)).toHaveLength(fetches);
    // What the cache holds is whole: git reads every object of it.
    expect(git(path, 'fsck', '--no-dangling').trim()).toBe('');
  });

  it('a remote that stops answering: the clone is stopped at timeout_ms, nothing is left, no git left running', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    s.hang(/git-upload-pack/);
    const err = await cacheOf({ timeoutMs: 1_500 })
      .prepare(REPO, prWants(head))
      .catch((e) => e);
    expect(err).toBeInstanceOf(RepoCacheError);
    expect(err.message).toContain('cloning acme/widgets');
    expect(err.message).toContain('it took longer than github.clone.timeout_ms (1500 ms)');
    expect(existsSync(join(work, 'repos', 'acme', 'widgets.git'))).toBe(false);
    expect(incoming()).toEqual([]);
    const left = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(s.url);
        } catch {
          return false;
        }
      });
    expect(left).toEqual([]);
  });
});

describe('one clone or fetch at a time per repository', () => {
  it('two processes on one work root clone a repository once: the second waits for the first, then has what it needs', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    // Two caches on one root stand for two replicas: the lock is a file in the work root, whoever takes it.
    let waited!: () => void;
    const waiting = new Promise<void>((resolve) => {
      waited = resolve;
    });
    const first = cacheOf();
    const second = cacheOf({ onWait: () => waited() });
    const held = s.hold(/^GET \/acme\/widgets\.git\/info\/refs/);
    const one = first.prepare(REPO, prWants(head, r.main));
    await held.reached;
    const two = second.prepare(REPO, prWants(head, r.main));
    await waiting;
    held.release();
    expect(await one).toBe(await two);
    const clones = s.fetches(REPO).filter((f) => f.haves === 0);
    expect(clones).toHaveLength(1);
    expect(existsSync(`${await one}.lock`)).toBe(false);
  });

  it('runs of one process asking for the same at once share one clone', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    let waits = 0;
    const cache = cacheOf({ onWait: () => (waits += 1) });
    const paths = await Promise.all(Array.from({ length: 5 }, () => cache.prepare(REPO, prWants(head))));
    expect(new Set(paths).size).toBe(1);
    expect(s.fetches(REPO).filter((f) => f.haves === 0)).toHaveLength(1);
    // No run waited on the lock: one clone was made, and the others were given it.
    expect(waits).toBe(0);
  });
});

describe('nothing fetched runs', () => {
  it('hooks never run: a reference-transaction or post-checkout hook in the cache is not run by a fetch or a checkout', async () => {
    const r = remote();
    const head = r.pushHead({ 'feature.txt': 'x\n' });
    const cache = cacheOf();
    const path = await cache.prepare(REPO, prWants(head));
    const marker = join(tmp.path, 'hook-ran');
    mkdirSync(join(path, 'hooks'));
    for (const hook of ['reference-transaction', 'post-checkout', 'post-index-change']) {
      writeFileSync(join(path, 'hooks', hook), `#!/bin/sh\necho ${hook} >> ${marker}\n`);
      chmodSync(join(path, 'hooks', hook), 0o755);
    }
    const next = r.pushHead({ 'feature.txt': 'y\n' });
    await cache.prepare(REPO, prWants(next));
    const checkout = join(tmp.path, 'checkout');
    await checkoutPullRequest(
      { repository: REPO, clone: path, headSha: next, headRef: 'pr', baseRef: 'main', number: 2 },
      checkout,
    );
    expect(readFileSync(join(checkout, 'feature.txt'), 'utf8')).toBe('y\n');
    await removeCheckout(path, checkout);
    expect(existsSync(marker)).toBe(false);
  });
});
