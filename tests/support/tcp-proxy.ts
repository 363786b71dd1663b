import net from 'node:net';

// A TCP proxy on loopback in front of the test PostgreSQL server: a store connected through it loses its
// database when the proxy is cut, while the server itself (shared by every test) keeps running.
//
// node:net facts this relies on (https://nodejs.org/api/net.html): `server.listen(0, host)` picks a free
// port (`server.address().port`); `socket.destroy()` closes a connection at once, the peer sees it end;
// a socket's 'data' before `pipe` is attached is not lost when the pipe is attached in the same handler.
//
// PostgreSQL protocol fact (protocol-message-formats, StartupMessage): the first message of a connection
// without SSL is the startup message, which holds its parameters as text, application_name among them; the
// proxy reads it to tell connections apart (drydock's pool from its wake-up listener).

export class TcpProxy {
  private readonly sockets = new Set<net.Socket>();
  private cutOff = false;
  private refusing: ((startup: Buffer) => boolean) | null = null;
  /** The application_name of each connection dropped (cut or refused), in order. */
  readonly dropped: string[] = [];

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** A proxy to the server of `url` (a postgres:// URL). */
  static async start(url: string): Promise<TcpProxy> {
    const u = new URL(url);
    const target = { host: u.hostname, port: Number(u.port || 5432) };
    const server = net.createServer();
    const proxy = new TcpProxy(server, target);
    server.on('connection', (socket) => proxy.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `url` (a postgres:// URL of the proxied server) through the proxy. */
  url(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String((this.server.address() as net.AddressInfo).port);
    return u.toString();
  }

  /** The database goes away: every connection ends, and new ones end right after their startup message. */
  cut(): void {
    this.cutOff = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** The database answers again. */
  restore(): void {
    this.cutOff = false;
  }

  /** Connections whose startup message `refuse` picks end right after it (null: none). */
  refuse(refuse: ((startup: Buffer) => boolean) | null): void {
    this.refusing = refuse;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.sockets.add(client);
    client.on('error', () => {});
    client.on('close', () => this.sockets.delete(client));
    client.once('data', (startup) => {
      if (this.cutOff || this.refusing?.(startup)) {
        this.dropped.push(applicationName(startup));
        client.destroy();
        return;
      }
      const upstream = net.connect(this.target.port, this.target.host);
      this.sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      client.on('close', () => upstream.destroy());
      upstream.write(startup);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }
}

/** The application_name a startup message names ('' if none). */
export function applicationName(startup: Buffer): string {
  const fields = startup.subarray(8).toString('utf8').split('\0');
  const at = fields.indexOf('application_name');
  return at >= 0 ? (fields[at + 1] ?? '') : '';
}
