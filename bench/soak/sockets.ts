import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// Which TCP connections a process holds, read from /proc (Linux): the socket inodes among its open file
// descriptors (`/proc/<pid>/fd/* -> socket:[inode]`), looked up in the kernel's TCP tables
// (`/proc/<pid>/net/tcp` and `tcp6`: "local_address" is hex ip:port, the 10th column the inode). The drills
// use it to tell which replica a PostgreSQL backend serves: pg_stat_activity.client_port is the local port of
// the replica's end of the connection.

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** The local ports of the TCP sockets `pid` has open (empty when the process is gone). */
export function localPorts(pid: number): Set<number> {
  const ports = new Set<number>();
  let inodes: Set<string>;
  try {
    inodes = socketInodes(pid);
  } catch {
    return ports;
  }
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9]!)) continue;
      const port = Number.parseInt(cols[1]!.split(':')[1] ?? '', 16);
      if (Number.isFinite(port)) ports.add(port);
    }
  }
  return ports;
}
