import { createHash } from 'node:crypto';
import { lookup as systemLookup } from 'node:dns/promises';
import { chmod, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { BlockList, connect, isIP, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { hostAllowed, normalizedDomains } from '../domain/network.js';
import type { Logger } from '../logger.js';
import { privateTempDir } from '../workspace/temp.js';
import type { EgressRoute } from './sandbox.js';

// The egress proxy: the only way out of the sandbox for an execution whose plan allows the network. The
// invariant: a command reaches only the host names on its plan's list, at addresses that are not this machine's
// loopback, link-local or unspecified ones. The sandbox gives the command no network but a loopback of its own
// (bwrap --unshare-net, always: sandbox.ts); this proxy runs in the daemon, outside the sandbox, and listens on a
// Unix socket per list, which the sandbox binds in; a bridge inside (egress-bridge.ts) joins the command's
// HTTP_PROXY on its own loopback to that socket. Claude Code's sandbox does the same: "Network access is
// controlled through a proxy server running outside the sandbox" (Claude Code docs, Sandboxing, Network isolation).
//
// What the proxy does with a request (HTTP/1.1 proxy forms, RFC 9110 §9.3.6 and RFC 9112 §3.2.2):
//   - CONNECT host:port (https and any TCP protocol) and plain requests with an absolute http:// URL;
//   - the host must be a name (a literal IP is refused: nothing would say which name it stands for) that the
//     list allows (domain/network.ts: `*.x` is any name below x); then the proxy resolves it itself, refuses it
//     when any address is loopback (127.0.0.0/8, ::1), link-local (169.254.0.0/16: cloud metadata services;
//     fe80::/10), unspecified or "this network" (0.0.0.0/8, ::; Linux connects 0.0.0.0 to the local host), or an
//     IPv4-mapped, IPv4-compatible or NAT64 form of those, and connects to the address it checked (never a name
//     resolved again, so a second answer cannot differ: DNS rebinding);
//   - a refusal is answered 403 with one line saying why (in the body and in the X-Drydock-Egress header, which
//     `curl -v` shows for CONNECT), and logged at info with the host (never a URL, user or header: they may
//     carry credentials);
//   - bounded: at most `maxConnections` connections at once over every list, each closed after `idleTimeoutMs`
//     without traffic, connecting and resolving within their own timeouts, request headers within 16 KiB.

/** Resolves a name to all its addresses (dns.lookup with `all`); replaceable, for tests that map names. */
export type Lookup = (host: string) => Promise<readonly { address: string; family: number }[]>;

export interface EgressOptions {
  logger: Logger;
  /** Default: the system's resolver (`dns.lookup`, as other programs on the machine resolve). */
  lookup?: Lookup;
  /** Connections at once over every list (default 256); more are answered 503. */
  maxConnections?: number;
  /** A connection without traffic either way for this long is closed (default 120 000 ms). */
  idleTimeoutMs?: number;
  /** Resolving a name, and connecting to its address, each within this (default 15 000 ms). */
  connectTimeoutMs?: number;
}

/** Distinct lists at once: each is one listening socket, kept until the daemon stops. */
const MAX_ROUTES = 1024;
const HEADER_BYTES = 16 * 1024;

const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet('0.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('127.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4');
// ::/96 holds :: and ::1 and the IPv4-compatible ::a.b.c.d (RFC 4291 §2.5.5.1, deprecated: no use but tricks).
FORBIDDEN.addSubnet('::', 96, 'ipv6');
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6');
// BlockList already checks an IPv4-mapped ::ffff:a.b.c.d against its IPv4 rules (node's net.BlockList); said
// here as well, with the NAT64 well-known prefix (RFC 6052) that embeds an IPv4 address the same way.
for (const prefix of ['::ffff:', '64:ff9b::']) {
  FORBIDDEN.addSubnet(`${prefix}0.0.0.0`, 104, 'ipv6');
  FORBIDDEN.addSubnet(`${prefix}127.0.0.0`, 104, 'ipv6');
  FORBIDDEN.addSubnet(`${prefix}169.254.0.0`, 112, 'ipv6');
}

/** Whether the proxy refuses to connect to `address` (an IP address as the resolver gave it). */
export function forbiddenAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, ''); // a zone index (fe80::1%eth0) is no part of the address
  const family = isIP(bare);
  if (family === 0) return true;
  return FORBIDDEN.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

type Checked = { address: string } | { status: 403 | 502 | 504; reason: string };

/** The daemon's egress proxy: one listening Unix socket per list of host names, opened by the execute phase. */
export class Egress {
  readonly #logger: Logger;
  readonly #lookup: Lookup;
  readonly #limits: { maxConnections: number; idleTimeoutMs: number; connectTimeoutMs: number };
  readonly #routes = new Map<string, Promise<EgressRoute>>();
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  #dir: string | null = null;
  #closed = false;

  constructor(opts: EgressOptions) {
    this.#logger = opts.logger;
    this.#lookup = opts.lookup ?? ((host) => systemLookup(host, { all: true, verbatim: true }));
    this.#limits = {
      maxConnections: opts.maxConnections ?? 256,
      idleTimeoutMs: opts.idleTimeoutMs ?? 120_000,
      connectTimeoutMs: opts.connectTimeoutMs ?? 15_000,
    };
  }

  /**
   * The route for commands allowed `domains`: the socket of the proxy for that list (made on first use, the
   * same one for every execution with the same list), or null for an empty list (no network at all).
   */
  open(domains: readonly string[]): Promise<EgressRoute | null> {
    const list = normalizedDomains(domains);
    if (list.length === 0) return Promise.resolve(null);
    if (this.#closed) return Promise.reject(new Error('egress proxy: the daemon is stopping'));
    const key = createHash('sha256').update(list.join('\n')).digest('hex').slice(0, 24);
    let route = this.#routes.get(key);
    if (!route) {
      if (this.#routes.size >= MAX_ROUTES) {
        return Promise.reject(
          new Error(
            `egress proxy: ${MAX_ROUTES} different lists of host names are in use; restart the daemon`,
          ),
        );
      }
      route = this.#listen(key, list);
      this.#routes.set(key, route);
      route.catch(() => this.#routes.delete(key));
    }
    return route;
  }

  /** Stops every listener and connection and removes the sockets. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const socket of this.#sockets) socket.destroy();
    await Promise.all(this.#servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
    await Promise.allSettled(this.#routes.values());
    this.#routes.clear();
    const dir = this.#dir;
    this.#dir = null;
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }

  /**
   * The directory of the sockets: made once, 0700, so only the daemon's uid reaches it on the host; named for
   * this process, so a later start removes it if this one dies without `close` (workspace/temp.ts).
   */
  #directory(): string {
    this.#dir ??= privateTempDir('drydock-egress-');
    return this.#dir;
  }

  async #listen(key: string, list: string[]): Promise<EgressRoute> {
    const socket = join(this.#directory(), `${key}.sock`);
    const server = createServer({ maxHeaderSize: HEADER_BYTES, requestTimeout: 0 }, (req, res) => {
      void this.#forward(list, req, res);
    });
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
      void this.#tunnel(list, req, client as Socket, head);
    });
    server.on('connection', (s: Socket) => this.#admit(s));
    server.on('clientError', (_err, s: Duplex) => s.destroy());
    // Idle connections (keep-alive, or a request that stalls) are closed; tunnels set their own timeouts.
    server.setTimeout(this.#limits.idleTimeoutMs);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#servers.push(server);
    if (this.#closed) server.close();
    // unix(7): connecting to a stream socket needs write permission on it, and a root daemon's commands run as
    // another uid (sandbox.ts). The directory, 0700, keeps every other user of the host out.
    await chmod(socket, 0o666);
    return Object.freeze({ domains: Object.freeze(list), socket });
  }

  #admit(socket: Socket): void {
    if (this.#sockets.size >= this.#limits.maxConnections) {
      socket.end(answer(503, `too many connections at once (at most ${this.#limits.maxConnections})`));
      return;
    }
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  /** Where a request for `host` may go: the address to connect to, or the refusal. */
  async #check(list: readonly string[], host: string, port: number): Promise<Checked> {
    const name = host.toLowerCase().replace(/\.$/, '');
    const refuse = (shown: string, reason: string): Checked => {
      this.#logger.info({ host: shown, port, reason }, 'egress refused');
      return { status: 403, reason };
    };
    const literal = name.replace(/^\[(.*)\]$/, '$1');
    if (isIP(literal))
      return refuse(literal, `${literal} is an IP address: only host names on the list are allowed`);
    // Not logged or echoed as given: something that is no host name may be anything, a password included.
    if (!HOST_NAME.test(name) || name.length > 253) return refuse('(not a host name)', 'not a host name');
    if (!hostAllowed(list, name)) {
      return refuse(name, `${name} is not on this execution's list of host names (${list.join(', ')})`);
    }
    let addresses: readonly { address: string }[];
    try {
      addresses = await within(this.#lookup(name), this.#limits.connectTimeoutMs);
    } catch (err) {
      return { status: 502, reason: `${name} could not be resolved (${codeOf(err)})` };
    }
    if (addresses.length === 0) return { status: 502, reason: `${name} has no address` };
    const bad = addresses.find((a) => forbiddenAddress(a.address));
    if (bad) {
      return refuse(
        name,
        `${name} resolves to ${bad.address}, a loopback, link-local or unspecified address of no host to reach`,
      );
    }
    return { address: addresses[0]!.address };
  }

  /** CONNECT host:port: a TCP tunnel to the checked address. */
  async #tunnel(list: readonly string[], req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const { idleTimeoutMs, connectTimeoutMs } = this.#limits;
    client.setTimeout(idleTimeoutMs, () => client.destroy());
    const target = authority(req.url ?? '');
    if (!target) {
      client.end(answer(400, 'CONNECT needs host:port'));
      return;
    }
    const checked = await this.#check(list, target.host, target.port);
    if ('status' in checked) {
      client.end(answer(checked.status, checked.reason));
      return;
    }
    if (client.destroyed) return;
    const upstream = connect({ host: checked.address, port: target.port });
    let open = false;
    upstream.setTimeout(connectTimeoutMs, () => {
      if (!open) client.end(answer(504, `${target.host}:${target.port} did not answer in time`));
      upstream.destroy();
    });
    upstream.once('connect', () => {
      open = true;
      upstream.setTimeout(idleTimeoutMs);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      if (!open) client.end(answer(502, `could not reach ${target.host}:${target.port} (${codeOf(err)})`));
      else client.destroy();
    });
    upstream.on('close', () => (open ? client.end() : undefined));
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  }

  /** A plain request with an absolute http:// URL: sent on to the checked address. */
  async #forward(list: readonly string[], req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      reply(res, 400, 'send an absolute http:// URL (a proxy request), or CONNECT host:port for https');
      return;
    }
    if (url.protocol !== 'http:') {
      reply(res, 400, `only http:// URLs are sent on; ${url.protocol}// goes through CONNECT`);
      return;
    }
    const port = Number(url.port || 80);
    const checked = await this.#check(list, url.hostname, port);
    if ('status' in checked) {
      reply(res, checked.status, checked.reason);
      return;
    }
    const upstream = request({
      host: checked.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...endToEnd(req.headers), host: url.host },
      agent: false,
      timeout: this.#limits.idleTimeoutMs,
    });
    upstream.on('timeout', () => upstream.destroy(new Error('ETIMEDOUT')));
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, endToEnd(up.headers));
      up.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) reply(res, 502, `could not reach ${url.host} (${codeOf(err)})`);
      else res.destroy();
    });
    req.pipe(upstream);
  }
}

/** `host:port` of a CONNECT request (a bracketed IPv6 literal included), or null. */
function authority(target: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]*\]|[^:]+):(\d{1,5})$/.exec(target);
  const port = Number(m?.[2]);
  return m && port > 0 && port < 65_536 ? { host: m[1]!, port } : null;
}

/** Headers for one hop only (RFC 9110 §7.6.1), which a proxy does not pass on. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) out[name] = value;
  }
  return out;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The one-line body of an answer of the proxy's own. */
const bodyOf = (reason: string) => `drydock egress proxy: ${reason}\n`;

/** A header value carries printable ASCII only. */
const headerSafe = (reason: string) => reason.replace(/[^\x20-\x7e]/g, '?');

/** The proxy's own answer, written on a raw socket (CONNECT, or a connection turned away). */
function answer(status: number, reason: string): string {
  const body = bodyOf(reason);
  return [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Drydock-Egress: ${headerSafe(reason)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function reply(res: ServerResponse, status: number, reason: string): void {
  const body = bodyOf(reason);
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Drydock-Egress': headerSafe(reason),
    Connection: 'close',
  });
  res.end(body);
}

/** An error's code (ENOTFOUND, ECONNREFUSED, ...), never its message. */
function codeOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.message === 'string' && /^E[A-Z]+$/.test(e.message) ? e.message : 'error';
}

/** `p`, or a rejection with ETIMEDOUT after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
