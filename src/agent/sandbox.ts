import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';

// The sandbox every Bash command of the execute phase runs in, built on bubblewrap (`bwrap`, the Debian
// package `bubblewrap`; Claude Code's Linux sandbox is built on it too). What the command sees (bwrap(1)):
//   - its own PID, IPC, UTS and cgroup namespaces and a /proc of its own: the daemon, its environment
//     (/proc/<pid>/environ) and every other process are invisible;
//   - no network namespace of the host unless the plan allows the network (`network: true`): only a
//     loopback of its own;
//   - the system read-only: /usr and the /bin, /sbin, /lib* links or directories, a short list of files
//     from /etc (users, name resolution, certificates, the dynamic linker's cache, time zone), and the
//     operator's `execute.sandbox_read_only_paths`; the rest of the host (home directories, /root, /var,
//     /run and its sockets, the daemon's data directory and config file, other workspaces) is absent;
//   - the execution's directory read-write (the worktree, or the session's subdirectory of it), the
//     repository's git directory read-only, a private /tmp (also HOME) and /var/tmp;
//   - no capabilities (`--cap-drop ALL`, which matters when the daemon runs as root), no new privileges,
//     a session of its own (no terminal to inject into), and death with the daemon (`--die-with-parent`).
// The command is also spawned with only the environment drydock builds (`safeEnv`): bwrap's own
// environment, visible as /proc/1/environ inside, holds nothing of the daemon's.

export type SandboxSetting = 'bwrap' | 'off';

export interface SandboxStatus {
  /** `bwrap`: commands run confined. `off`: the operator turned it off. `unavailable`: wanted but not
   *  working here, so commands refuse to run. */
  state: 'bwrap' | 'off' | 'unavailable';
  /** One sentence for logs, the plan page and /readyz. */
  detail: string;
}

/** What one execution's commands may see. All paths absolute. */
export interface Confinement {
  /** Where commands start. */
  cwd: string;
  /** Mounted read-write at the same path. */
  writable: string[];
  /** Mounted read-only at the same path (the repository's git directory). */
  readOnly: string[];
  network: boolean;
}

/** Files and directories of /etc that programs need; the rest of /etc (and what it may hold) stays out. */
const ETC = [
  'passwd',
  'group',
  'hosts',
  'host.conf',
  'resolv.conf',
  'nsswitch.conf',
  'gai.conf',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'timezone',
  'alternatives',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  'crypto-policies',
  'mime.types',
  'protocols',
  'services',
  'os-release',
  'debian_version',
];

/** System directories, mounted read-only, or re-created as the same symbolic link (merged /usr). */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** HOME inside the sandbox: on its private /tmp. */
export const SANDBOX_HOME = '/tmp/home';

export interface SandboxOptions {
  setting: SandboxSetting;
  /** The bubblewrap program (default `bwrap`, found on PATH). */
  bwrap?: string;
  /** More host paths to mount read-only (toolchains installed outside /usr). */
  readOnlyPaths?: readonly string[];
  /** Paths never visible inside, even when they lie under a mounted one (the data directory, the config). */
  hidden?: readonly string[];
}

function within(parent: string, p: string): boolean {
  return p === parent || p.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

function realOrResolved(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return resolve(p);
  }
}

export class Sandbox {
  readonly setting: SandboxSetting;
  readonly #bwrap: string;
  readonly #system: string[];
  /** The operator's read-only paths: mounted after the private /tmp, so that one under /tmp stays visible. */
  readonly #extra: string[];
  readonly #mounted: string[];
  readonly #hidden: string[];
  #status: Promise<SandboxStatus> | null = null;

  constructor(opts: SandboxOptions) {
    this.setting = opts.setting;
    this.#bwrap = opts.bwrap ?? 'bwrap';
    this.#system = [];
    this.#extra = [];
    this.#mounted = [];
    for (const dir of SYSTEM) {
      let isLink: boolean;
      try {
        isLink = lstatSync(dir).isSymbolicLink();
      } catch {
        continue; // not on this system
      }
      if (isLink) this.#system.push('--symlink', readlinkSync(dir), dir);
      else {
        this.#system.push('--ro-bind', dir, dir);
        this.#mounted.push(dir);
      }
    }
    for (const name of ETC) this.#system.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
    for (const p of opts.readOnlyPaths ?? []) {
      if (!isAbsolute(p)) continue; // the config schema refuses these; never bind relative to a cwd
      this.#extra.push('--ro-bind-try', p, p);
      this.#mounted.push(realOrResolved(p));
    }
    this.#hidden = (opts.hidden ?? []).map(realOrResolved);
  }

  /** Whether commands can run, and how; bwrap is tried once (a tiny command in a scratch directory). */
  status(): Promise<SandboxStatus> {
    this.#status ??= this.#probe();
    return this.#status;
  }

  async #probe(): Promise<SandboxStatus> {
    if (this.setting === 'off') {
      return {
        state: 'off',
        detail: 'execute.sandbox is off: commands run unconfined, as the daemon user, with its file access',
      };
    }
    const scratch = mkdtempSync(join(tmpdir(), 'drydock-sandbox-probe-'));
    try {
      const argv = this.wrap({ cwd: scratch, writable: [scratch], readOnly: [], network: false }, 'exit 0');
      const outcome = await runOnce(argv, 10_000);
      if (outcome.ok) return { state: 'bwrap', detail: 'commands run in a bubblewrap sandbox' };
      return {
        state: 'unavailable',
        detail: `the bubblewrap sandbox does not work here (${outcome.why}); Bash refuses to run until it does, or until execute.sandbox is set to off`,
      };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  /** The argv that runs `command` with /bin/bash inside the sandbox. */
  wrap(c: Confinement, command: string): string[] {
    const args = [
      this.#bwrap,
      '--die-with-parent',
      '--new-session',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(c.network ? [] : ['--unshare-net']),
      '--cap-drop',
      'ALL',
      '--hostname',
      'drydock',
      ...this.#system,
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      '--dir',
      SANDBOX_HOME,
      '--dir',
      '/var',
      '--tmpfs',
      '/var/tmp',
      ...this.#extra,
    ];
    const readOnly = c.readOnly.map((p) => resolve(p));
    const writable = c.writable.map((p) => resolve(p));
    for (const p of readOnly) args.push('--ro-bind', p, p);
    for (const p of writable) args.push('--bind', p, p);
    // Hidden paths under anything mounted are covered, then what must stay visible inside them is mounted
    // again (a worktree lives in the data directory).
    const mounted = [...this.#mounted, ...readOnly, ...writable];
    for (const h of this.#hidden) {
      if (!mounted.some((m) => within(m, h))) continue;
      if (isDirectory(h)) args.push('--tmpfs', h);
      else args.push('--ro-bind', '/dev/null', h);
      for (const p of readOnly) if (within(h, p)) args.push('--ro-bind', p, p);
      for (const p of writable) if (within(h, p)) args.push('--bind', p, p);
    }
    args.push('--chdir', resolve(c.cwd), '--setenv', 'HOME', SANDBOX_HOME, '--setenv', 'TMPDIR', '/tmp');
    args.push('--', '/bin/bash', '-c', command);
    return args;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Runs argv with an empty environment; ok when it exits 0 within the time. */
function runOnce(argv: string[], timeoutMs: number): Promise<{ ok: true } | { ok: false; why: string }> {
  return new Promise((done) => {
    let stderr = '';
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: timeoutMs,
    });
    child.stderr?.on('data', (b: Buffer) => {
      if (stderr.length < 2_000) stderr += b.toString('utf8');
    });
    child.on('error', (err) =>
      done({ ok: false, why: `${argv[0]}: ${(err as NodeJS.ErrnoException).code ?? err.message}` }),
    );
    child.on('exit', (code, signal) => {
      if (code === 0) done({ ok: true });
      else done({ ok: false, why: stderr.trim().split('\n')[0] || `exit ${code ?? signal}` });
    });
  });
}
