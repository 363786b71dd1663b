import type { Daemon, Lifetime } from './daemon.js';
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
