import { readFileSync } from 'node:fs';
import { withClient } from '../../tests/support/postgres.js';
import { createBenchDatabase as createDatabase, type FreshDatabase } from '../shared/bench-database.js';

// The bench's own PostgreSQL database for drydock (--store postgres; bench/shared/bench-database.ts makes it
// and drops it), and the CPU its server processes spent.
//
// PostgreSQL facts relied on: pg_stat_activity lists one row per server process with its pid and the database
// it is connected to (docs: monitoring-stats). Linux /proc/<pid>/stat: fields 14 and 15
// are utime and stime in clock ticks (USER_HZ, 100 a second; proc(5)).

export interface BenchDatabase extends FreshDatabase {
  /** CPU time (ms) of each server process connected to this database now, by pid. */
  backendCpu(): Promise<Map<number, number>>;
}

/** An empty database of a unique name on the server at `serverUrl` (whose own database is only connected to). */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const db = await createDatabase(serverUrl, 'webhooks');
  return {
    ...db,
    backendCpu: () =>
      withClient(serverUrl, async (c) => {
        const pids = await c.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [db.name],
        );
        const out = new Map<number, number>();
        for (const { pid } of pids.rows) {
          const ms = processCpuMs(pid);
          if (ms !== null) out.set(pid, ms);
        }
        return out;
      }),
  };
}

/** utime + stime of a process in ms, or null when it is gone (or /proc is not there). */
function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * CPU (ms) the database's server processes spent between two samples: processes in both count their
 * difference, processes that appeared count all theirs; processes that ended between the samples are lost
 * (node-postgres closes a connection idle for 10 s), so this is a lower bound.
 */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}
