import { chmod, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

// Ports of this machine's loopback that one stdio MCP server may reach (`loopback_ports`, e.g. a PostgreSQL on
// 127.0.0.1:5432). The sandbox has a loopback of its own (bwrap --unshare-net), and the egress proxy never
// connects to a loopback address (egress.ts), so each port named is carried by a Unix socket: the daemon
// listens on one socket per port, in a private directory, and joins each connection to 127.0.0.1:<port>;
// inside the sandbox a small bridge of the daemon's own node listens on 127.0.0.1:<port> of the sandbox's
// loopback and joins each connection to that socket. The server reaches exactly the ports its entry in the
// configuration names, never the daemon's own API port (the schema refuses it), nothing else of the host.

export interface Forward {
  port: number;
  /** The socket on the host; bound at the same path inside the sandbox. */
  socket: string;
}

/** The daemon's side: one listening socket per port, joined to 127.0.0.1:<port>. */
export class LoopbackForwards {
  readonly forwards: Forward[] = [];
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();

  static async open(dir: string, ports: readonly number[]): Promise<LoopbackForwards> {
    const forwards = new LoopbackForwards();
    try {
      for (const port of ports) await forwards.#listen(dir, port);
    } catch (err) {
      await forwards.close();
      throw err;
    }
    return forwards;
  }

  async #listen(dir: string, port: number): Promise<void> {
    const socket = join(dir, `${port}.sock`);
    const server = createServer((client) => {
      this.#track(client);
      const upstream = this.#track(connect({ host: '127.0.0.1', port }));
      client.pipe(upstream);
      upstream.pipe(client);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#servers.push(server);
    // unix(7): connecting needs write permission on the socket; a root daemon's servers run as another uid.
    // The directory (0700) keeps every other user of the host out.
    await chmod(socket, 0o666);
    this.forwards.push({ port, socket });
  }

  #track(socket: Socket): Socket {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    return socket;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await Promise.all(this.#servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
    await Promise.all(this.forwards.map((f) => rm(f.socket, { force: true })));
  }
}

/** `node -e FORWARD_SOURCE <port>=<socket>,...`: listens on each port, prints "ready" once all do. */
export const FORWARD_SOURCE = `'use strict';
const net = require('node:net');
process.stdout.on('error', () => {});
const pairs = process.argv[1].split(',').map((p) => p.split('='));
let waiting = pairs.length;
for (const [port, socket] of pairs) {
  const server = net.createServer({ allowHalfOpen: true }, (c) => {
    const u = net.connect(socket);
    u.once('connect', () => { c.pipe(u); u.pipe(c); });
    u.on('error', () => c.destroy());
    c.on('error', () => u.destroy());
  });
  server.on('error', (e) => { process.stdout.write('forward ' + port + ': ' + e.code + '\\n'); process.exit(1); });
  server.listen(Number(port), '127.0.0.1', () => { if (--waiting === 0) process.stdout.write('ready\\n'); });
}
`;

/**
 * `bash -c FORWARD_WRAPPER drydock-loopback <node> <source> <pairs> <argv...>`: the bridge started, its
 * "ready" read (10 s at most), then the server exec'd in bash's place. The server never starts before its
 * ports can be reached, and does not start at all when the bridge cannot (exit 125, with its first line).
 */
export const FORWARD_WRAPPER = `exec 3< <(exec "$1" -e "$2" "$3" 2>&1)
IFS= read -r -t 10 line <&3
if [ "$line" != ready ]; then echo "drydock: the loopback ports did not open\${line:+: $line}" >&2; exit 125; fi
exec 3<&-
shift 3
exec "$@"`;

export function behindForwards(
  node: string,
  forwards: readonly Forward[],
  argv: readonly string[],
): string[] {
  if (forwards.length === 0) return [...argv];
  const pairs = forwards.map((f) => `${f.port}=${f.socket}`).join(',');
  return ['/bin/bash', '-c', FORWARD_WRAPPER, 'drydock-loopback', node, FORWARD_SOURCE, pairs, ...argv];
}
