import { join } from 'node:path';
import { freePort } from '../shared/free-port.js';
import { Daemon, type Lifetime } from './daemon.js';
import { call } from './http.js';
import { sleep } from './stats.js';

// The daemons of a soak: one (the SQLite soak), or several replicas on one PostgreSQL database (the fault
// drill). Each is a `Daemon` with its own URL, log and replica id. The schedule kills one at a time and
// restarts it; a watchdog restarts any that exits on its own (which fails the soak).

export interface Replica {
  /** Its replica_id (DRYDOCK_REPLICA_ID): runs it claims carry it in runs.claimed_by. */
  id: string;
  url: string;
  logFile: string;
  daemon: Daemon;
  /** The environment it runs with (the CLI run with it reaches the same database). */
  env: NodeJS.ProcessEnv;
}

export interface ReplicaPlan {
  /** dist/src/cli/main.js */
  cli: string;
  /** The run's temporary directory: HOME of every replica, and where their data_dirs and logs go. */
  dir: string;
  count: number;
  /** Each replica its own data_dir (`<dir>/<id>/data`) and log (`daemon-<id>.log`), as replicas on one
   *  PostgreSQL database have; otherwise one daemon with `<dir>/data` and `daemon.log` (the SQLite soak). */
  separate: boolean;
  /** What every replica shares: config file, admin token, model URL, database, log level, ... */
  env: NodeJS.ProcessEnv;
  nodeArgs: string[];
  origin: number;
  sampleEveryMs: number;
}

/**
 * The replicas of a run, not started: `replica-a`, `replica-b`, ... each on a free port picked once (restarts
 * keep the URL), with its own DRYDOCK_REPLICA_ID and model key (ANTHROPIC_API_KEY=soak-key-<id>: the scripted
 * model counts requests by key).
 */
export async function makeReplicas(plan: ReplicaPlan): Promise<Replica[]> {
  const replicas: Replica[] = [];
  for (let i = 0; i < plan.count; i++) {
    const id = `replica-${String.fromCharCode(97 + (i % 26))}${i >= 26 ? Math.floor(i / 26) : ''}`;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: plan.dir,
      ...plan.env,
      DRYDOCK_DATA_DIR: plan.separate ? join(plan.dir, id, 'data') : join(plan.dir, 'data'),
      DRYDOCK_PORT: String(port),
      DRYDOCK_REPLICA_ID: id,
      ANTHROPIC_API_KEY: `soak-key-${id}`,
    };
    const logFile = join(plan.dir, plan.separate ? `daemon-${id}.log` : 'daemon.log');
    const daemon = new Daemon({
      cli: plan.cli,
      url,
      env,
      logFile,
      nodeArgs: plan.nodeArgs,
      origin: plan.origin,
      sampleEveryMs: plan.sampleEveryMs,
    });
    replicas.push({ id, url, logFile, daemon, env });
  }
  return replicas;
}

/** Date.now() once every replica's /readyz answers 200, or null after `timeoutMs`. */
export async function allReady(replicas: readonly Replica[], timeoutMs: number): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(replicas);
  while (pending.size) {
    for (const r of [...pending]) {
      const reply = await call(r.url, 'GET', '/readyz', { timeoutMs: 2_000 });
      if (reply.ok && reply.status === 200) pending.delete(r);
    }
    if (!pending.size) break;
    if (Date.now() > deadline) return null;
    await sleep(250);
  }
  return Date.now();
}

export class ReplicaSet {
  /** Replicas the schedule is killing or restarting: the watchdog leaves them alone. */
  private readonly scheduled = new Set<Replica>();
  /** Restarts by the watchdog under way. */
  private readonly restarting = new Set<Replica>();
  private watchdog: NodeJS.Timeout | null = null;

  constructor(readonly replicas: readonly Replica[]) {}

  /** Starts them one after the other (the first start creates the schema; the others find it). */
  async startAll(): Promise<Lifetime[]> {
    const lives: Lifetime[] = [];
    for (const r of this.replicas) lives.push(await r.daemon.start());
    return lives;
  }

  /** Every second: a replica that is down and not being killed or restarted exited on its own; restart it. */
  watch(log: (line: string) => void): void {
    this.watchdog ??= setInterval(() => {
      for (const r of this.replicas) {
        if (r.daemon.up || this.scheduled.has(r) || this.restarting.has(r)) continue;
        this.restarting.add(r);
        log(`${r.id} exited unexpectedly; restarting`);
        r.daemon
          .start()
          .catch((err: Error) => log(`${r.id}: restart failed: ${err.message}`))
          .finally(() => this.restarting.delete(r));
      }
    }, 1_000);
  }

  async unwatch(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    while (this.restarting.size) await sleep(100);
  }

  /** How many replicas other than `except` are up. */
  othersUp(except: Replica): number {
    return this.replicas.filter((r) => r !== except && r.daemon.up).length;
  }

  /**
   * SIGKILL `r`, then `afterKill` (while it is down), a pause, and its restart. Waits for a watchdog restart
   * of it under way first.
   */
  async killAndRestart<T>(
    r: Replica,
    pauseMs: number,
    afterKill: () => Promise<T>,
  ): Promise<{ killedAt: number; othersUp: number; seen: T; restarted: Lifetime }> {
    while (this.restarting.has(r)) await sleep(100);
    this.scheduled.add(r);
    try {
      const othersUp = this.othersUp(r);
      if (r.daemon.up) await r.daemon.stop('SIGKILL');
      const killedAt = Date.now();
      const seen = await afterKill();
      await sleep(Math.max(0, pauseMs - (Date.now() - killedAt)));
      const restarted = await r.daemon.start();
      return { killedAt, othersUp, seen, restarted };
    } finally {
      this.scheduled.delete(r);
    }
  }

  /** SIGTERM to every replica at once (as an orchestrator stopping the service); their last lifetimes. */
  async stopAll(): Promise<Lifetime[]> {
    return Promise.all(this.replicas.map((r) => r.daemon.stop('SIGTERM')));
  }

  get unexpectedExits(): number {
    return this.replicas.reduce((n, r) => n + r.daemon.unexpectedExits, 0);
  }

  close(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    for (const r of this.replicas) r.daemon.close();
  }
}
