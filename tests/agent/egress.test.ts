import { existsSync, statSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Egress, forbiddenAddress } from '../../src/agent/egress.js';
import { hostAddress, lookupFrom } from '../support/egress.js';

// The egress proxy on its own, spoken to over its Unix socket as the bridge in the sandbox does
// (tests/agent/tools/execute/sandbox.test.ts runs it behind real bubblewrap). Names resolve through a table:
// `allowed.test` to this machine's own non-loopback address, where a test server listens on 0.0.0.0.

const host = hostAddress();
let web: HttpServer;
let webPort: number;
let tcp: Server;
let tcpPort: number;
let egress: Egress;
let logs: Record<string, unknown>[];

const NAMES = {
  'allowed.test': host,
  'a.wild.test': host,
  'wild.test': host,
  'loop.test': '127.0.0.1',
  'mapped.test': '::ffff:127.0.0.1',
  'metadata.test': '169.254.169.254',
  'mixed.test': [host, '127.0.0.1'],
  'zero.test': '0.0.0.0',
};

function proxy(over: Partial<ConstructorParameters<typeof Egress>[0]> = {}): Egress {
  logs = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return new Egress({ logger: pino({ level: 'info' }, sink), lookup: lookupFrom(NAMES), ...over });
}

beforeEach(async () => {
  web = createHttpServer((req, res) => {
    res.setHeader('x-seen-proxy-authorization', String(req.headers['proxy-authorization'] ?? 'none'));
    res.end(`hello ${req.method} ${req.headers.host} ${req.url}\n`);
  });
  await new Promise<void>((r) => web.listen(0, '0.0.0.0', r));
  webPort = (web.address() as { port: number }).port;
  tcp = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => tcp.listen(0, '0.0.0.0', r));
  tcpPort = (tcp.address() as { port: number }).port;
  egress = proxy();
});

afterEach(async () => {
  await egress.close();
  web.closeAllConnections();
  await new Promise<void>((r) => web.close(() => r()));
  await new Promise<void>((r) => tcp.close(() => r()));
});

/** Sends `text` on a new connection to the socket; everything it gets back until the proxy closes. */
function exchange(socket: string, text: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let got = '';
    s.setTimeout(timeoutMs, () => {
      s.destroy();
      resolve(got);
    });
    s.on('data', (d) => {
      got += d;
    });
    s.on('error', reject);
    s.on('close', () => resolve(got));
    s.write(text);
  });
}

const get = (target: string, headers = '') =>
  `GET ${target} HTTP/1.1\r\nHost: whatever\r\n${headers}Connection: close\r\n\r\n`;

async function route(domains: string[]): Promise<string> {
  const r = await egress.open(domains);
  if (!r) throw new Error('no route');
  return r.socket;
}

describe('the egress proxy', () => {
  it('forwards a plain request for a listed name to the address it resolved, with the Host of the URL', async () => {
    const socket = await route(['allowed.test']);
    const out = await exchange(
      socket,
      get(`http://allowed.test:${webPort}/a?b=1`, 'Proxy-Authorization: Basic c2VjcmV0\r\n'),
    );
    expect(out).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(out).toContain(`hello GET allowed.test:${webPort} /a?b=1`);
    // A credential for the proxy is one hop's: never passed on.
    expect(out).toContain('x-seen-proxy-authorization: none');
  });

  it('tunnels CONNECT for a listed name, case and a trailing dot aside', async () => {
    const socket = await route(['allowed.test']);
    const out = await exchange(
      socket,
      `CONNECT ALLOWED.test.:${tcpPort} HTTP/1.1\r\n\r\nping through`,
      1_000,
    );
    expect(out).toBe('HTTP/1.1 200 Connection Established\r\n\r\nping through');
  });

  it.each([
    [
      'a name not on the list',
      'elsewhere.test',
      "elsewhere.test is not on this execution's list of host names (allowed.test, loop.test, mapped.test, metadata.test, mixed.test, zero.test)",
    ],
    ['a listed name that resolves to 127.0.0.1', 'loop.test', 'loop.test resolves to 127.0.0.1, a loopback'],
    [
      'a listed name that resolves to ::ffff:127.0.0.1',
      'mapped.test',
      'mapped.test resolves to ::ffff:127.0.0.1',
    ],
    [
      'a listed name that resolves to the metadata address',
      'metadata.test',
      'metadata.test resolves to 169.254.169.254',
    ],
    [
      'a listed name with one loopback address among others',
      'mixed.test',
      'mixed.test resolves to 127.0.0.1',
    ],
    ['a listed name that resolves to 0.0.0.0', 'zero.test', 'zero.test resolves to 0.0.0.0'],
    ['an IPv4 address', '127.0.0.1', '127.0.0.1 is an IP address: only host names on the list are allowed'],
    ['an IPv4 address of this machine', host, `${host} is an IP address`],
    ['an IPv6 address', '[::1]', '::1 is an IP address'],
  ])('answers 403 with the reason to CONNECT and to a plain request: %s', async (_what, name, reason) => {
    const socket = await route([
      'allowed.test',
      'loop.test',
      'mapped.test',
      'metadata.test',
      'mixed.test',
      'zero.test',
    ]);
    for (const text of [`CONNECT ${name}:${tcpPort} HTTP/1.1\r\n\r\n`, get(`http://${name}:${webPort}/`)]) {
      const out = await exchange(socket, text);
      expect(out).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
      expect(out.toLowerCase()).toContain(`x-drydock-egress: ${reason.toLowerCase()}`);
      expect(out).toContain(`\r\n\r\ndrydock egress proxy: ${reason}`);
    }
    const refusals = logs.filter((l) => l.msg === 'egress refused');
    expect(refusals).toHaveLength(2);
    for (const l of refusals) expect(l).toMatchObject({ level: 30, host: name.replace(/^\[|\]$/g, '') });
  });

  it('a wildcard allows every name below it, not the name itself', async () => {
    const socket = await route(['*.wild.test']);
    expect(await exchange(socket, get(`http://a.wild.test:${webPort}/`))).toMatch(/^HTTP\/1\.1 200/);
    expect(await exchange(socket, get(`http://wild.test:${webPort}/`))).toMatch(/^HTTP\/1\.1 403/);
  });

  it('logs a refusal with the host alone: never the user, password or path of the URL', async () => {
    const socket = await route(['allowed.test']);
    const out = await exchange(socket, get(`http://bob:hunter2@elsewhere.test:${webPort}/private-path`));
    expect(out).toMatch(/^HTTP\/1\.1 403/);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ msg: 'egress refused', host: 'elsewhere.test', port: webPort });
    expect(JSON.stringify(logs)).not.toMatch(/hunter2|bob|private-path/);
    // What is no host name at all is neither logged nor echoed.
    await exchange(socket, `CONNECT bob:hunter2@allowed.test:${tcpPort} HTTP/1.1\r\n\r\n`);
    expect(JSON.stringify(logs)).not.toContain('hunter2');
  });

  it('says when a listed name does not resolve (502) and refuses what is no proxy request (400)', async () => {
    const socket = await route(['nowhere.test']);
    expect(await exchange(socket, get(`http://nowhere.test:${webPort}/`))).toContain(
      'drydock egress proxy: nowhere.test could not be resolved (ENOTFOUND)',
    );
    expect(await exchange(socket, get('/just/a/path'))).toMatch(/^HTTP\/1\.1 400 /);
    expect(await exchange(socket, get(`https://nowhere.test:${webPort}/`))).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('turns away connections past its limit with 503', async () => {
    await egress.close();
    egress = proxy({ maxConnections: 1 });
    const socket = await route(['allowed.test']);
    const first: Socket = connect(socket);
    await new Promise((r) => first.once('connect', r));
    await new Promise((r) => setTimeout(r, 50));
    const out = await exchange(socket, get(`http://allowed.test:${webPort}/`));
    expect(out).toMatch(/^HTTP\/1\.1 503 Service Unavailable/);
    expect(out).toContain('too many connections at once (at most 1)');
    first.destroy();
  });

  it('closes a tunnel that stays idle', async () => {
    await egress.close();
    egress = proxy({ idleTimeoutMs: 200 });
    const socket = await route(['allowed.test']);
    const started = Date.now();
    const out = await exchange(socket, `CONNECT allowed.test:${tcpPort} HTTP/1.1\r\n\r\n`, 5_000);
    expect(out).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('keeps one socket per list, none for an empty one, and removes them when closed', async () => {
    expect(await egress.open([])).toBeNull();
    const a = await egress.open(['allowed.test', 'B.test']);
    const b = await egress.open(['b.test', 'allowed.test', 'allowed.test']);
    expect(a).toEqual(b);
    expect(a?.domains).toEqual(['allowed.test', 'b.test']);
    const c = await egress.open(['allowed.test']);
    expect(c?.socket).not.toBe(a?.socket);
    // Any uid may connect (a root daemon's commands are another uid); the directory keeps the host out.
    expect(statSync(a!.socket).mode & 0o777).toBe(0o666);
    expect(statSync(a!.socket.replace(/\/[^/]+$/, '')).mode & 0o777).toBe(0o700);
    await egress.close();
    expect(existsSync(a!.socket)).toBe(false);
    await expect(egress.open(['allowed.test'])).rejects.toThrow(/stopping/);
  });
});

describe('forbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '::',
    '0.0.0.0',
    '0.1.2.3',
    '169.254.169.254',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:0.0.0.0',
    '::127.0.0.1',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    'not an address',
  ])('refuses %s', (address) => {
    expect(forbiddenAddress(address)).toBe(true);
  });

  it.each(['192.0.2.2', '8.8.8.8', '10.0.0.1', '2606:4700::1111', '::ffff:8.8.8.8', 'fec0::1', '128.0.0.1'])(
    'lets %s through',
    (address) => {
      expect(forbiddenAddress(address)).toBe(false);
    },
  );
});
