import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { RunCheckout } from '../domain/types.js';
import { type GitCredentials, git, gitTransfer, TransferStopped } from './git.js';
import { lockFile } from './repo-lock.js';

// Repositories cloned on demand: a repository a trigger or event names that has no configured local clone
// (github.repositories) is cloned, bare, into `<work root>/repos/<owner>/<repo>.git` the first time a run needs
// it, and the refs a run needs are fetched into it before each run.
//
// INVARIANT: a name from a webhook payload touches no path and no git argument until it is a plain GitHub
// name (`repositoryName`): one owner of letters, digits and single inner hyphens, one repository of letters,
// digits, `.`, `-` and `_`, neither `.` nor `..`, no leading dash. Refs a run asks for are checked the same
// way (`checkedRef`), and every git argument drawn from them comes after `--`.
//
// INVARIANT: nothing fetched is ever read as configuration or run. The cache is a bare repository drydock made
// itself (`git init --bare` with an empty template: no hooks, no sample files); its configuration is the
// remote's URL, written by drydock; fetches never recurse into submodules nor follow a redirect (the
// credentials go to the configured host only), and reach http(s) only; every git command runs with
// `HARDENING` (hooks off, nothing configurable executes: git.ts).
//
// INVARIANT: a later run never trusts a half-made clone. A first clone is made in `<work root>/repos/.incoming/`
// and renamed into place only once its fetch succeeded within the limits; whatever fails is removed. A fetch
// into an existing cache moves its refs only after git has the whole pack (git updates refs last); one stopped
// midway leaves at most a `tmp_pack_*` file, which git never reads and the next fetch removes once it is old.
//
// One clone or fetch at a time per repository, across every process sharing the work root (replicas on one
// volume): a lock file beside the cache, `<repo>.git.lock` (repo-lock.ts: O_EXCL, touched while held, taken
// over when its holder died).

/** A clone or fetch that failed; its message names the repository and what failed, never a credential. */
export class RepoCacheError extends Error {}

/** What a run needs of a repository: a ref of the remote, a commit, or both. */
export interface Want {
  /** A ref of the remote (`refs/heads/<branch>`, `refs/tags/<tag>`, `refs/pull/<n>/head`), fetched into the cache. */
  ref?: string;
  /** A commit the run needs; fetched by its id when the ref did not bring it. */
  commit?: string | null;
  /** The run can do without it (a pull request's base, read for project memory only). */
  optional?: boolean;
}

export interface RepoCacheOptions {
  /** The work root (`work_dir`, else `data_dir`); the caches live in `<root>/repos`. */
  root: string;
  /** Repositories are fetched from `<baseUrl>/<owner>/<repo>.git` (github.git_url, else GitHub's web host). */
  baseUrl: string;
  /** The credentials git answers with for a repository; undefined: none (a public repository). */
  credentials: (repository: string) => Promise<GitCredentials | undefined>;
  /** Longest the clone or fetches before one run may take in all (github.clone.timeout_ms). */
  timeoutMs: number;
  /** The most a repository's cache may hold on disk (github.clone.max_bytes). */
  maxBytes: number;
  /** Told when a clone or fetch waits for another process's clone or fetch of the same repository. */
  onWait?: (repository: string) => void;
}

/** Plain GitHub account names: letters, digits and hyphens, no leading hyphen, at most 39 characters. */
const OWNER = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;
/** Plain GitHub repository names: letters, digits, `.`, `-`, `_`, at most 100 characters, no leading dash. */
const REPO = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,99}$/;
const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
/** One component of a ref drydock fetches: no leading `.` or `-`, nothing git or a shell reads specially. */
const REF_PART = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * owner and repo of a plain GitHub name `owner/repo`, or null for anything else: a path (`..`, more slashes),
 * an option (`-x`), a name GitHub never gives (`x.git`, which GitHub serves as `x`).
 */
export function repositoryName(repository: string): { owner: string; repo: string } | null {
  const parts = repository.split('/');
  if (parts.length !== 2) return null;
  const [owner, repo] = parts as [string, string];
  if (!OWNER.test(owner) || !REPO.test(repo)) return null;
  if (repo === '.' || repo === '..' || /\.git$/i.test(repo)) return null;
  return { owner, repo };
}

/** The ref `ref` when drydock may fetch it (see REF_PART), and where it lands in the cache; null otherwise. */
export function checkedRef(ref: string): { remote: string; local: string } | null {
  const pull = /^refs\/pull\/([1-9][0-9]{0,9})\/head$/.exec(ref);
  if (pull) return { remote: ref, local: `refs/drydock/pull/${pull[1]}/head` };
  const m = /^refs\/(heads|tags)\/(.+)$/.exec(ref);
  if (!m || m[2]!.length > 255) return null;
  const parts = m[2]!.split('/');
  if (!parts.every((p) => REF_PART.test(p) && !p.endsWith('.lock') && !p.includes('..'))) return null;
  if (m[2]!.endsWith('.')) return null;
  return { remote: ref, local: m[1] === 'heads' ? `refs/remotes/origin/${m[2]}` : ref };
}

/**
 * The local clone configuration maps `repository` to (github.repositories), or undefined. GitHub's names are
 * case-insensitive: a payload's `Acme/Widgets` finds the clone configured as `acme/widgets`.
 */
export function configuredClone(
  repositories: Record<string, { path: string }>,
  repository: string,
): string | undefined {
  if (Object.hasOwn(repositories, repository)) return repositories[repository]!.path;
  const lower = repository.toLowerCase();
  const key = Object.keys(repositories).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : repositories[key]!.path;
}

/**
 * What a run's checkout needs of the repository: a pull request's head (its ref and commit), and its base branch
 * and commit when the remote still has them (project memory is read from the base); an event's commit, by id
 * or by the branch or tag that names it.
 */
export function checkoutWants(c: RunCheckout): Want[] {
  if (c.kind === 'commit') return [{ ...(c.ref ? { ref: c.ref } : {}), commit: c.sha }];
  return [
    { ref: `refs/pull/${c.number}/head`, commit: c.headSha },
    { ref: `refs/heads/${c.baseRef}`, commit: c.baseSha ?? null, optional: true },
  ];
}

/**
 * The commit `ref` (a branch or tag of the remote) points at in the cache at `dir`, as its last fetch brought
 * it (`prepare` with that ref first).
 */
export async function cachedCommit(dir: string, ref: string): Promise<string> {
  const checked = checkedRef(ref);
  if (!checked) throw new RepoCacheError(`refusing to read ref ${JSON.stringify(ref.slice(0, 300))}`);
  const sha = await git(dir, ['rev-parse', '--verify', '--quiet', `${checked.local}^{commit}`], {
    bare: true,
    timeoutMs: 10_000,
  }).catch(() => '');
  if (!/^[0-9a-f]{40}$/.test(sha.trim())) {
    throw new RepoCacheError(`${ref} was not fetched into the clone of this repository`);
  }
  return sha.trim();
}

/** Bytes of the regular files under `dir` (symbolic links are not followed); 0 when it does not exist. */
export async function bytesUnder(dir: string): Promise<number> {
  const st = await lstat(dir).catch(() => null);
  if (!st) return 0;
  if (!st.isDirectory()) return st.isFile() ? st.size : 0;
  let total = 0;
  for (const name of await readdir(dir).catch(() => [] as string[]))
    total += await bytesUnder(join(dir, name));
  return total;
}

/** `text` with every occurrence of each secret replaced. */
function scrubbed(text: string, secrets: (string | undefined)[]): string {
  let out = text.replace(/\/\/[^/@\s]*@/g, '//');
  for (const s of secrets) if (s) out = out.split(s).join('[secret]');
  return out;
}

/** git's own words for a failure, short: its `fatal:` and `error:` lines, else its last line. */
function gitSays(err: unknown): string {
  const lines = String((err as Error)?.message ?? err)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const told = lines.filter((l) => /^(fatal|error|remote):/.test(l));
  return (told.length ? told.slice(0, 3) : lines.slice(-1)).join(' ').slice(0, 500);
}

/** A partial pack older than this was left by a fetch that was stopped: no git drydock runs lasts so long. */
const LEFTOVER_MS = 60 * 60_000;

/** The clones of repositories no configuration maps to a local clone; see the invariants above. */
export class RepoCache {
  /** Clones and fetches in progress in this process, by cache and wants: the same asked twice is done once. */
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(private readonly opts: RepoCacheOptions) {}

  /** Where the cache of `repository` lives; throws RepoCacheError for a name that is not a plain GitHub name. */
  pathOf(repository: string): string {
    const name = repositoryName(repository);
    if (!name) {
      throw new RepoCacheError(
        `refusing to clone ${JSON.stringify(repository.slice(0, 200))}: not a GitHub owner/repo name`,
      );
    }
    // GitHub's names are case-insensitive: one cache per repository however a payload spells it.
    return join(resolve(this.opts.root), 'repos', name.owner.toLowerCase(), `${name.repo.toLowerCase()}.git`);
  }

  /** Whether `clone` is this cache's clone of `repository` (and not a configured one). */
  holds(repository: string, clone: string): boolean {
    try {
      return resolve(clone) === this.pathOf(repository);
    } catch {
      return false;
    }
  }

  /** The URL the cache of `repository` fetches from. */
  urlOf(repository: string): string {
    const name = repositoryName(repository);
    if (!name) throw new RepoCacheError(`not a GitHub owner/repo name: ${repository.slice(0, 200)}`);
    return `${this.opts.baseUrl.replace(/\/+$/, '')}/${name.owner}/${name.repo}.git`;
  }

  /**
   * The cache of `repository` holding what `wants` names: cloned now if it does not exist yet, else fetched
   * into. Returns its path. Throws RepoCacheError saying which repository and what failed.
   */
  async prepare(repository: string, wants: Want[]): Promise<string> {
    // Several triggers firing on one pull request start their runs together: they share one fetch.
    const key = `${this.pathOf(repository)}\n${JSON.stringify(wants)}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const done = this.prepareAlone(repository, wants).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, done);
    return done;
  }

  private async prepareAlone(repository: string, wants: Want[]): Promise<string> {
    const path = this.pathOf(repository);
    const refs = wants.map((w) => {
      const ref = w.ref === undefined ? null : checkedRef(w.ref);
      if (w.ref !== undefined && !ref) {
        throw new RepoCacheError(
          `refusing to fetch ${repository} ref ${JSON.stringify(w.ref.slice(0, 300))}`,
        );
      }
      if (w.commit && !SHA.test(w.commit)) {
        throw new RepoCacheError(
          `refusing to fetch ${repository} commit ${JSON.stringify(w.commit.slice(0, 100))}`,
        );
      }
      return ref;
    });
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const release = await lockFile(`${path}.lock`, () => this.opts.onWait?.(repository));
    try {
      const credentials = await this.credentialsOf(repository);
      const job: Job = {
        repository,
        url: this.urlOf(repository),
        credentials,
        deadline: Date.now() + this.opts.timeoutMs,
        wants: wants.map((w, i) => ({ ...w, checked: refs[i] ?? null })),
      };
      if (existsSync(path)) await this.fetchInto(path, job, 'fetching');
      else await this.clone(path, job);
      return path;
    } finally {
      await release();
    }
  }

  private async credentialsOf(repository: string): Promise<GitCredentials | undefined> {
    try {
      return await this.opts.credentials(repository);
    } catch (err) {
      throw new RepoCacheError(`no credentials for ${repository}: ${(err as Error).message}`);
    }
  }

  /** A new cache: made in `.incoming/`, filled, checked, then renamed into place; removed on any failure. */
  private async clone(path: string, job: Job): Promise<void> {
    const incoming = join(resolve(this.opts.root), 'repos', '.incoming');
    await mkdir(incoming, { recursive: true, mode: 0o700 });
    // `+` is in no GitHub name: no repository's prefix is the start of another's.
    const prefix = `${job.repository.replace('/', '+').toLowerCase()}+`;
    // Under the lock, so no clone of this repository is in progress: what is there was left by one that died.
    for (const name of await readdir(incoming).catch(() => [] as string[])) {
      if (name.startsWith(prefix)) await rm(join(incoming, name), { recursive: true, force: true });
    }
    const dir = join(incoming, `${prefix}${randomBytes(6).toString('hex')}`);
    try {
      await git(incoming, ['init', '--quiet', '--bare', '--template=', dir], { timeoutMs: 30_000 });
      await git(dir, ['remote', 'add', 'origin', job.url], { bare: true, timeoutMs: 10_000 });
      await this.fetchInto(dir, job, 'cloning');
      await rename(dir, path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Fetches the wanted refs (one command), then each wanted commit still missing by its id; a missing commit
   * that is not optional fails. The cache's size is watched while git writes and checked after.
   */
  private async fetchInto(dir: string, job: Job, doing: 'cloning' | 'fetching'): Promise<void> {
    const what = `${doing} ${job.repository} from ${job.url}`;
    await this.dropLeftovers(dir);
    if (
      (await git(dir, ['remote', 'get-url', 'origin'], { bare: true }).catch(() => '')).trim() !== job.url
    ) {
      await git(dir, ['remote', 'set-url', 'origin', job.url], { bare: true, timeoutMs: 10_000 });
    }
    const before = await bytesUnder(dir);
    if (before > this.opts.maxBytes) throw this.tooLarge(what, dir, before, doing);
    const refspecs = job.wants.flatMap((w) => (w.checked ? [`+${w.checked.remote}:${w.checked.local}`] : []));
    if (refspecs.length) await this.fetchRefs(dir, job, what, refspecs);
    for (const w of job.wants) {
      if (!w.commit || (await hasCommit(dir, w.commit))) continue;
      // Kept under a ref of drydock's own: a later fetch offers it to the remote as a commit the cache has.
      await this.fetch(dir, job, what, [`+${w.commit}:refs/drydock/commits/${w.commit}`]).catch((err) => {
        if (!w.optional) throw err;
      });
      if (!w.optional && !(await hasCommit(dir, w.commit))) {
        throw new RepoCacheError(`${what} failed: commit ${w.commit} is not on the remote`);
      }
    }
    const after = await bytesUnder(dir);
    if (after > this.opts.maxBytes) throw this.tooLarge(what, dir, after, doing);
  }

  /** The refs in one fetch; when the remote lacks one of them, each ref alone, skipping optional missing ones. */
  private async fetchRefs(dir: string, job: Job, what: string, refspecs: string[]): Promise<void> {
    try {
      await this.fetch(dir, job, what, refspecs);
      return;
    } catch (err) {
      if (!(err instanceof RepoCacheError) || !/couldn't find remote ref/i.test(err.message)) throw err;
    }
    for (const w of job.wants) {
      if (!w.checked) continue;
      await this.fetch(dir, job, what, [`+${w.checked.remote}:${w.checked.local}`]).catch((err) => {
        // A commit the run needs may still come by its id (a pull request's head after its ref moved on).
        if (!(err instanceof RepoCacheError) || !/couldn't find remote ref/i.test(err.message)) throw err;
      });
    }
  }

  /** One `git fetch` of `refspecs` from origin, within the time left and the size limit. */
  private async fetch(dir: string, job: Job, what: string, refspecs: string[]): Promise<void> {
    const left = job.deadline - Date.now();
    if (left <= 0) throw new RepoCacheError(`${what} failed: ${this.timeLimit()}`);
    // git-config(1) (https://git-scm.com/docs/git-config): below `fetch.unpackLimit` objects a fetched pack is
    // unpacked into loose objects, at or above it the pack is stored as it comes; `http.followRedirects=false`
    // follows no redirect (by default git follows those of its first request, to any host, which would then
    // ask for credentials, and the askpass program answers any prompt); `protocol.allow=never` with
    // `protocol.<name>.allow=always` speaks only the protocols named.
    const args = [
      // Every fetched object stays in the pack git receives (no loose objects): the size watch sees it grow.
      ...['-c', 'fetch.unpackLimit=1', '-c', 'transfer.unpackLimit=1'],
      // The credentials go to the configured host only; only http(s) is spoken.
      ...['-c', 'http.followRedirects=false', '-c', 'protocol.allow=never'],
      ...['-c', 'protocol.https.allow=always', '-c', 'protocol.http.allow=always'],
      ...['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', '--no-write-fetch-head'],
      ...['--', 'origin', ...refspecs],
    ];
    const objects = join(dir, 'objects');
    const base = (await bytesUnder(dir)) - (await bytesUnder(objects));
    try {
      await gitTransfer(dir, args, {
        bare: true,
        timeoutMs: left,
        credentials: job.credentials,
        watch: async () => {
          const now = base + (await bytesUnder(objects));
          return now > this.opts.maxBytes ? `it passed ${now} bytes` : null;
        },
      });
    } catch (err) {
      throw this.failure(what, err, job.credentials);
    }
  }

  private failure(what: string, err: unknown, credentials: GitCredentials | undefined): RepoCacheError {
    if (err instanceof TransferStopped) {
      return new RepoCacheError(
        err.why === 'timeout'
          ? `${what} failed: ${this.timeLimit()}`
          : `${what} failed: the repository is larger than github.clone.max_bytes (${this.opts.maxBytes} bytes): ${err.message}`,
      );
    }
    const said = scrubbed(gitSays(err), [credentials?.password]);
    const auth = /Authentication failed|could not read (Username|Password)|terminal prompts disabled|401/i;
    if (auth.test(said)) {
      return new RepoCacheError(
        `${what} failed: ${credentials ? 'the credentials for it were refused' : 'it needs credentials, and none are configured (github.token or github.app)'} (git: ${said})`,
      );
    }
    return new RepoCacheError(`${what} failed: ${said}`);
  }

  private timeLimit(): string {
    return `it took longer than github.clone.timeout_ms (${this.opts.timeoutMs} ms)`;
  }

  private tooLarge(what: string, dir: string, bytes: number, doing: 'cloning' | 'fetching'): RepoCacheError {
    const fix =
      doing === 'cloning' ? 'raise the limit' : `raise the limit, or remove ${dir} to clone it again`;
    return new RepoCacheError(
      `${what} failed: the repository is larger than github.clone.max_bytes (${this.opts.maxBytes} bytes): its cache holds ${bytes} bytes; ${fix}`,
    );
  }

  /** Partial packs of fetches stopped long ago (see LEFTOVER_MS): git never reads them, they only take room. */
  private async dropLeftovers(dir: string): Promise<void> {
    const pack = join(dir, 'objects', 'pack');
    const oldest = Date.now() - Math.max(LEFTOVER_MS, 2 * this.opts.timeoutMs);
    for (const name of await readdir(pack).catch(() => [] as string[])) {
      if (!name.startsWith('tmp_')) continue;
      const st = await lstat(join(pack, name)).catch(() => null);
      if (st && st.mtimeMs < oldest) await rm(join(pack, name), { force: true });
    }
  }
}

interface Job {
  repository: string;
  url: string;
  credentials: GitCredentials | undefined;
  /** When the time for this run's clone or fetches is up (ms since the epoch). */
  deadline: number;
  wants: (Want & { checked: { remote: string; local: string } | null })[];
}

async function hasCommit(dir: string, sha: string): Promise<boolean> {
  try {
    await git(dir, ['cat-file', '-e', `${sha}^{commit}`], { bare: true, timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  }
}
