import { execFile, execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { freshDatabase } from '../../tests/support/postgres.js';
import { freePort } from '../shared/free-port.js';

// A PostgreSQL server of the soak's own, so the drill can restart it without touching anyone else's: a
// cluster made with Debian's postgresql-common tools (pg_createcluster / pg_ctlcluster / pg_dropcluster) on a
// free port, trust authentication for local and 127.0.0.1 connections (initdb's --auth-local / --auth-host),
// one empty database in it for the daemons. `drop()` stops and removes the whole cluster (data directory,
// configuration, log); run.ts calls it when the soak ends, fails or is interrupted.

const run = promisify(execFile);

/** The newest PostgreSQL installed (/usr/lib/postgresql/<major>), or null. */
function installedMajor(): string | null {
  let majors: string[] = [];
  try {
    majors = readdirSync('/usr/lib/postgresql').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  return majors.sort((a, b) => Number(b) - Number(a))[0] ?? null;
}

export class ScratchCluster {
  readonly major: string;
  /** `<prefix>_<pid>`. */
  readonly name: string;
  port = 0;
  /** The daemons' database, postgres://postgres@127.0.0.1:<port>/<database>, once `start()` made it. */
  url = '';
  private begun = false;
  private dropped = false;

  constructor(prefix: string) {
    const major = installedMajor();
    if (!major) {
      throw new Error(
        'scratch cluster: no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)',
      );
    }
    this.major = major;
    this.name = `${prefix}_${process.pid}`;
  }

  /** Makes and starts the cluster on a free port and creates the daemons' database in it. */
  async start(): Promise<void> {
    this.port = await freePort();
    // From here on, drop() has something to remove (pg_createcluster may be cut off halfway).
    this.begun = true;
    await run('pg_createcluster', [
      this.major,
      this.name,
      '-p',
      String(this.port),
      '--',
      '--auth-local=trust',
      '--auth-host=trust',
    ]);
    await run('pg_ctlcluster', [this.major, this.name, 'start']);
    const server = `postgres://postgres@127.0.0.1:${this.port}/postgres`;
    this.url = (await freshDatabase({ server, prefix: 'soak' })).url;
  }

  /** `pg_ctlcluster restart` (fast shutdown: open connections are cut); how long it took. */
  async restart(): Promise<number> {
    const t0 = Date.now();
    await run('pg_ctlcluster', [this.major, this.name, 'restart']);
    return Date.now() - t0;
  }

  /**
   * `pg_ctlcluster stop -m <mode>`: `fast` ends every session and shuts down cleanly; `immediate` is a
   * crash (no checkpoint: the next start recovers from the WAL). Returns once the server is down.
   */
  async stopServer(mode: 'fast' | 'immediate'): Promise<void> {
    await run('pg_ctlcluster', [this.major, this.name, 'stop', '-m', mode]);
  }

  /** `pg_ctlcluster start`: returns once the server accepts connections. */
  async startServer(): Promise<void> {
    await run('pg_ctlcluster', [this.major, this.name, 'start']);
  }

  /** A pg_dump (custom format) of the daemons' database into `file`, for --keep: the cluster goes at the end. */
  async dump(file: string): Promise<void> {
    await run(`/usr/lib/postgresql/${this.major}/bin/pg_dump`, ['-Fc', '-f', file, this.url]);
  }

  /** Stops and removes the cluster; safe to call again, and from an exit handler (synchronous). */
  drop(): void {
    if (this.dropped || !this.begun) return;
    this.dropped = true;
    try {
      execFileSync('pg_dropcluster', ['--stop', this.major, this.name], { stdio: 'ignore' });
    } catch (err) {
      process.stderr.write(
        `soak: could not drop the scratch cluster ${this.major}/${this.name}: ${(err as Error).message}; ` +
          `run: pg_dropcluster --stop ${this.major} ${this.name}\n`,
      );
    }
  }
}
