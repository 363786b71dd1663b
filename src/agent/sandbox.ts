import {
  accessSync,
  constants,
  lstatSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { lchown, lstat, readdir } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import {
  type IsolatedOutcome,
  type IsolatedRun,
  type Isolation,
  runCollect,
} from '../workspace/isolation.js';
import { privateTempDir } from '../workspace/temp.js';
import { behindBridge, SANDBOX_EGRESS_SOCKET } from './egress-bridge.js';

// The sandbox every Bash command of the execute phase runs in, built on bubblewrap (`bwrap`, the Debian
// package `bubblewrap`; Claude Code's Linux sandbox is built on it too). What the command sees (bwrap(1)):
//   - its own PID, IPC, UTS and cgroup namespaces and a /proc of its own: the daemon, its environment
//     (/proc/<pid>/environ) and every other process are invisible; /proc/sys, /proc/sysrq-trigger, /proc/irq
//     and /proc/bus are read-only (a writable /proc/sys/kernel/core_pattern is a way to the host's root);
//   - never the host's network: a network namespace of its own, always (`--unshare-net`), with only a
//     loopback of its own; the host's 127.0.0.1 (PostgreSQL, Redis, the daemon's API) is not there. When the
//     plan allows host names, the egress proxy's Unix socket is bound in and a bridge on that loopback carries
//     HTTP_PROXY to it (egress.ts, egress-bridge.ts): those names, and no address of this machine, are reached;
//   - the system read-only: /usr and the /bin, /sbin, /lib* links or directories, a short list of files
//     from /etc (users, name resolution, certificates, the dynamic linker's cache, time zone), and the
//     operator's `execute.sandbox_read_only_paths`; the rest of the host (home directories, /root, /var,
//     /run and its sockets, the daemon's data directory and config file, other workspaces) is absent;
//   - the execution's directory read-write (the worktree, or the session's subdirectory of it), the
//     repository's git directory read-only, a private /tmp (also HOME, size-limited) and /var/tmp;
//   - never the host's root. A daemon that is not root starts bwrap unprivileged: bwrap makes a user
//     namespace whose only uid is the daemon's, with no capability outside it. A daemon that runs as root
//     cannot get that from bwrap (a user namespace made by root maps the command to host uid 0, which still
//     owns /proc/sys and every root-only file): bwrap, as root, makes the namespaces and mounts, keeping only
//     CAP_SETUID, CAP_SETGID and CAP_SETPCAP, and setpriv(1) then becomes `execute.sandbox_user` (65534,
//     "nobody", by default) with no capability, an empty bounding set and no_new_privs before bash starts.
//     Files the command makes are that uid's; its writable directories are handed to it (`handOver`).
//   - no capabilities (`--cap-drop ALL`), no new privileges, a session of its own (no terminal to inject
//     into), death with the daemon (`--die-with-parent`), and per-command limits (prlimit(1): data memory,
//     processes, CPU seconds, the size of one file; the /tmp size).
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
  /** The egress proxy for the plan's host names (egress.ts), or null for no network at all. */
  network: EgressRoute | null;
}

/** The way out for commands whose plan allows host names: the proxy's socket for exactly that list. */
export interface EgressRoute {
  /** The host names the proxy behind `socket` lets through (normalized: domain/network.ts). */
  readonly domains: readonly string[];
  /** The proxy's Unix socket on the host; bound read-only in the sandbox at SANDBOX_EGRESS_SOCKET. */
  readonly socket: string;
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

/** git's safe.directory set to any directory, as protected (command-line) configuration (git-config(1)). */
const SAFE_DIRECTORY = [
  ['GIT_CONFIG_COUNT', '1'],
  ['GIT_CONFIG_KEY_0', 'safe.directory'],
  ['GIT_CONFIG_VALUE_0', '*'],
].flatMap(([name, value]) => ['--setenv', name!, value!]);

/** Parts of /proc that change the host rather than the namespace: mounted read-only over the sandbox's /proc. */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus'];

/** Who commands run as when the daemon is root (`execute.sandbox_user`). */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** Per-command limits (`execute.limits`); each is applied with prlimit(1), the /tmp size by bwrap. */
export interface CommandLimits {
  /** RLIMIT_DATA: the command's data (heap and private writable memory), per process. */
  memoryBytes: number;
  /** RLIMIT_NPROC: processes (and threads) of the command's uid. */
  processes: number;
  /** RLIMIT_CPU: CPU seconds, per process. */
  cpuSeconds: number;
  /** RLIMIT_FSIZE: the largest file a process may write. */
  fileBytes: number;
  /** The size of the private /tmp (a tmpfs). */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: Readonly<CommandLimits> = Object.freeze({
  memoryBytes: 4 * 1024 ** 3,
  processes: 1024,
  cpuSeconds: 600,
  fileBytes: 1024 ** 3,
  tmpBytes: 1024 ** 3,
});

export interface SandboxOptions {
  setting: SandboxSetting;
  /** The bubblewrap program (default: `bwrap` found on the daemon's PATH when the sandbox is made). */
  bwrap?: string;
  /** More host paths to mount read-only (toolchains installed outside /usr). */
  readOnlyPaths?: readonly string[];
  /** Paths never visible inside, even when they lie under a mounted one (the data directory, the config). */
  hidden?: readonly string[];
  /** Who commands run as when the daemon is root (default 65534:65534). */
  user?: SandboxUser;
  /** The daemon's uid (default `process.getuid()`): 0 makes commands run as `user`. */
  daemonUid?: number;
  limits?: Partial<CommandLimits>;
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

/** The program's absolute path on PATH (the daemon's, read once): probe and commands run the same one. */
function onPath(program: string): string {
  if (isAbsolute(program)) return program;
  for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return program; // spawning it fails with ENOENT: the probe reports that
}

export class Sandbox implements Isolation {
  readonly setting: SandboxSetting;
  /** Who commands run as on the host when the daemon is root; null when they keep the daemon's uid. */
  readonly runAs: SandboxUser | null;
  readonly limits: Readonly<CommandLimits>;
  readonly #bwrap: string;
  readonly #system: string[];
  /** The operator's read-only paths: mounted after the private /tmp, so that one under /tmp stays visible. */
  readonly #extra: string[];
  readonly #mounted: string[];
  readonly #hidden: string[];
  #status: Promise<SandboxStatus> | null = null;

  constructor(opts: SandboxOptions) {
    this.setting = opts.setting;
    this.#bwrap = onPath(opts.bwrap ?? 'bwrap');
    const daemonUid = opts.daemonUid ?? process.getuid?.() ?? -1;
    this.runAs = daemonUid === 0 ? (opts.user ?? { uid: 65534, gid: 65534 }) : null;
    this.limits = Object.freeze(withinHardLimits({ ...DEFAULT_LIMITS, ...opts.limits }));
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
    const scratch = privateTempDir('drydock-sandbox-probe-');
    try {
      await this.handOver(scratch);
      // The probe writes, as the command's uid, where commands write: a sandbox whose uid cannot write
      // the worktree would fail every command.
      const argv = this.wrap(
        { cwd: scratch, writable: [scratch], readOnly: [], network: null },
        'echo ok > probe && test "$(id -u)" != 0',
      );
      const outcome = await runOnce(argv, 10_000);
      if (outcome.ok) return { state: 'bwrap', detail: this.#detail() };
      return {
        state: 'unavailable',
        detail: `the bubblewrap sandbox does not work here (${outcome.why}); Bash refuses to run until it does, or until execute.sandbox is set to off`,
      };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  #detail(): string {
    if (!this.runAs) return 'commands run in a bubblewrap sandbox';
    return `commands run in a bubblewrap sandbox as uid ${this.runAs.uid} (the daemon runs as root: run it as an unprivileged user instead)`;
  }

  /** bwrap and the namespaces, capabilities and file systems every sandbox has, before its own mounts. */
  #namespaces(): string[] {
    const tmp = this.runAs ? ['--perms', '1777'] : [];
    const home = this.runAs ? ['--perms', '0777'] : [];
    return [
      this.#bwrap,
      '--die-with-parent',
      '--new-session',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      // Always: a network allowed is a proxy's socket (below), never the host's network namespace.
      '--unshare-net',
      '--cap-drop',
      'ALL',
      // Root only: kept for setpriv, which drops them (and the bounding set) before the command starts.
      ...(this.runAs
        ? ['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP']
        : []),
      '--hostname',
      'drydock',
      ...this.#system,
      '--proc',
      '/proc',
      ...PROC_READ_ONLY.flatMap((p) => ['--ro-bind-try', p, p]),
      '--dev',
      '/dev',
      ...tmp,
      '--size',
      String(this.limits.tmpBytes),
      '--tmpfs',
      '/tmp',
      ...home,
      '--dir',
      SANDBOX_HOME,
      '--dir',
      '/var',
      '--tmpfs',
      '/var/tmp',
      ...this.#extra,
    ];
  }

  /**
   * The confinement's own mounts: read-only and writable paths, the egress proxy's, and the hidden paths
   * covered wherever they lie under something mounted.
   */
  #mounts(c: Confinement): string[] {
    const args: string[] = [];
    const readOnly = c.readOnly.map((p) => resolve(p));
    const writable = c.writable.map((p) => resolve(p));
    for (const p of readOnly) args.push('--ro-bind', p, p);
    for (const p of writable) args.push('--bind', p, p);
    args.push(...this.#egressMounts(c));
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
    return args;
  }

  /** The argv that runs `command` with /bin/bash inside the sandbox. */
  wrap(c: Confinement, command: string): string[] {
    return this.wrapArgv(c, ['/bin/bash', '-c', command]);
  }

  /** The argv that runs `argv` (an absolute program and its arguments) inside the sandbox. */
  wrapArgv(c: Confinement, argv: readonly string[], env: Readonly<Record<string, string>> = {}): string[] {
    const args = [...this.#namespaces(), ...this.#mounts(c)];
    if (this.runAs) args.push(...openParents(args));
    // bwrap enters the directory after dropping its capabilities; as root it may not enter a directory
    // handed to the command's uid (0700), so the command enters it itself, once it is that uid.
    const cwd = resolve(c.cwd);
    const enter = this.runAs ? ['/usr/bin/env', `--chdir=${cwd}`, '--'] : [];
    args.push(
      '--chdir',
      this.runAs ? '/' : cwd,
      '--setenv',
      'HOME',
      SANDBOX_HOME,
      '--setenv',
      'TMPDIR',
      '/tmp',
    );
    // git refuses a repository another uid owns ("dubious ownership"): the repository's git directory is the
    // daemon's, the command's worktree is its own. Inside, nothing is to be protected by that check.
    if (this.runAs) args.push(...SAFE_DIRECTORY);
    for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
    // The bridge runs as the command's uid, under its limits, in its directory: after prlimit and setpriv.
    const command = c.network ? behindBridge(process.execPath, argv) : argv;
    args.push('--', ...this.#limited(), ...this.#dropRoot(), ...enter, ...command);
    return args;
  }

  /**
   * The proxy's socket, read-only (connecting needs no write access to the mount: unix(7) checks the socket's
   * own permission), and the daemon's node for the bridge when it lies outside what is mounted already.
   */
  #egressMounts(c: Confinement): string[] {
    if (!c.network) return [];
    const mounts = ['--ro-bind', c.network.socket, SANDBOX_EGRESS_SOCKET];
    const node = process.execPath;
    if (!this.#mounted.some((m) => within(m, node))) mounts.push('--ro-bind', node, node);
    return mounts;
  }

  /** prlimit(1) before the command: soft and hard limits, which the command cannot raise. */
  #limited(): string[] {
    const l = this.limits;
    return [
      '/usr/bin/prlimit',
      `--data=${l.memoryBytes}`,
      `--nproc=${l.processes}`,
      `--cpu=${l.cpuSeconds}`,
      `--fsize=${l.fileBytes}`,
      '--',
    ];
  }

  /** setpriv(1): a root daemon's command becomes `runAs` with no capability at all, for good. */
  #dropRoot(): string[] {
    if (!this.runAs) return [];
    return [
      '/usr/bin/setpriv',
      `--reuid=${this.runAs.uid}`,
      `--regid=${this.runAs.gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    ];
  }

  /**
   * Makes `path` (a directory drydock made for an execution, and everything in it) the command uid's, so
   * that a root daemon's commands can write there. Symbolic links are changed, never followed.
   */
  async handOver(path: string): Promise<void> {
    if (!this.runAs || this.setting === 'off') return;
    const { uid, gid } = this.runAs;
    const walk = async (p: string): Promise<void> => {
      await lchown(p, uid, gid);
      const s = await lstat(p);
      if (!s.isDirectory()) return;
      for (const name of await readdir(p)) await walk(join(p, name));
    };
    await walk(path);
  }

  /**
   * Runs `argv` in the sandbox for drydock itself (git over an execution's tree): no network, `opts.env` is
   * the whole environment inside (with HOME and TMPDIR), stdin is `opts.input`.
   */
  run(argv: readonly string[], opts: IsolatedRun): Promise<IsolatedOutcome> {
    const c: Confinement = {
      cwd: opts.cwd,
      writable: opts.writable,
      readOnly: opts.readOnly,
      network: null,
    };
    return runCollect(this.wrapArgv(c, argv, opts.env), { PATH: opts.env.PATH ?? '/usr/bin:/bin' }, opts);
  }

  /**
   * Makes a file Write or Edit made in a handed-over tree (and the directories on the way to it below
   * `root`) the command uid's again: the daemon, as root, made them its own.
   */
  async handOverFile(root: string, file: string): Promise<void> {
    if (!this.runAs || this.setting === 'off') return;
    const { uid, gid } = this.runAs;
    const top = resolve(root);
    for (let p = resolve(file); within(top, p) && p !== top; p = dirname(p)) await lchown(p, uid, gid);
  }
}

/**
 * `--chmod 0755` for each directory bwrap made on the way to a mount point. bwrap makes them 0700, owned by
 * the user it runs as: under a user namespace that is the command's uid, but a root daemon's command is
 * another uid and could not pass them. Directories that are part of a bound host path are left alone.
 */
function openParents(args: readonly string[]): string[] {
  const bound: string[] = [];
  const tmpfs = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    if (/^--(ro-)?bind(-try)?$/.test(args[i]!)) bound.push(args[i + 2]!);
    if (args[i] === '--tmpfs') tmpfs.add(args[i + 1]!);
  }
  const made = new Set<string>();
  for (const dest of bound) {
    for (let dir = dirname(dest); dir !== '/' && dir !== '.'; dir = dirname(dir)) {
      if (!tmpfs.has(dir) && !bound.some((b) => within(b, dir))) made.add(dir);
    }
  }
  return [...made].sort().flatMap((dir) => ['--chmod', '0755', dir]);
}

/** Names in /proc/self/limits of the limits prlimit sets. */
const LIMIT_NAMES: Record<Exclude<keyof CommandLimits, 'tmpBytes'>, string> = {
  memoryBytes: 'Max data size',
  processes: 'Max processes',
  cpuSeconds: 'Max cpu time',
  fileBytes: 'Max file size',
};

/**
 * Each limit no higher than the daemon's own hard limit: prlimit cannot raise a hard limit without
 * CAP_SYS_RESOURCE, and a limit it cannot set fails every command.
 */
function withinHardLimits(wanted: CommandLimits): CommandLimits {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return wanted;
  }
  const out = { ...wanted };
  for (const [key, name] of Object.entries(LIMIT_NAMES) as [keyof typeof LIMIT_NAMES, string][]) {
    const line = text.split('\n').find((l) => l.startsWith(name));
    const hard = line?.slice(name.length).trim().split(/\s+/)[1];
    if (hard !== undefined && /^\d+$/.test(hard)) out[key] = Math.min(out[key], Number(hard));
  }
  return out;
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
  return runCollect(argv, { PATH: '/usr/local/bin:/usr/bin:/bin' }, { timeoutMs, maxStdout: 4_096 }).then(
    (o) =>
      o.code === 0
        ? { ok: true as const }
        : { ok: false as const, why: o.stderr.trim().split('\n')[0] || `exit ${o.code ?? o.signal}` },
    (err: NodeJS.ErrnoException) => ({ ok: false as const, why: `${argv[0]}: ${err.code ?? err.message}` }),
  );
}
