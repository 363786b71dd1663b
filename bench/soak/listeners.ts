import { LISTEN_APPLICATION_NAME } from '../../src/store/postgres/listen.js';
import type { AuditDb } from './audit-db.js';
import type { Replica } from './replicas.js';
import { localPorts } from './sockets.js';

// Each replica's wake-up connection (src/store/postgres/listen.ts: application_name drydock-listen) as the
// server sees it: a backend in pg_stat_activity whose last query was the LISTEN, told apart by replica from
// the client port (the replica's end of the TCP connection, sockets.ts).

export interface ListenBackend {
  /** The backend's pid (pg_terminate_backend takes it). */
  pid: number;
  /** Its LISTEN statement was sent (the last query is the LISTEN). */
  listening: boolean;
}

/** By replica id: its listening connection's backend, or none. */
export async function listenBackends(
  db: AuditDb,
  replicas: readonly Replica[],
): Promise<Map<string, ListenBackend>> {
  const rows = await db.all<{ pid: number; client_port: number | null; query: string | null }>(
    'SELECT pid, client_port, query FROM pg_stat_activity WHERE application_name = ?',
    LISTEN_APPLICATION_NAME,
  );
  const found = new Map<string, ListenBackend>();
  for (const r of replicas) {
    const pid = r.daemon.pid;
    if (pid === null) continue;
    const ports = localPorts(pid);
    const row = rows.find((b) => b.client_port !== null && ports.has(Number(b.client_port)));
    if (row) found.set(r.id, { pid: Number(row.pid), listening: /^\s*LISTEN/i.test(row.query ?? '') });
  }
  return found;
}
