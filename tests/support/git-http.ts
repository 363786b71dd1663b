/**
 * A git smart-HTTP remote standing in for GitHub's git host: `git http-backend` (git's own server side of the
 * smart HTTP protocol, a CGI program) behind a `node:http` server on 127.0.0.1. Repositories are bare
 * repositories under `root`, reached at `<url>/<owner>/<repo>.git` as on github.com.
 *
 * As strict as GitHub about credentials: every request must carry HTTP Basic credentials whose password is the
 * server's token (any user name, as GitHub takes `x-access-token` or a login with a token); a request
 * without them, or with another password, is answered 401 with `WWW-Authenticate: Basic realm="GitHub"`, the
 * challenge git answers by asking its credential source (gitcredentials(7)), and "Invalid username or
 * password." for a wrong one. An authenticated request runs the CGI with REMOTE_USER set, which also lets it
 * push (git-http-backend(1): receive-pack is enabled for authenticated users).
 *
 * The CGI environment is the one git-http-backend(1) documents (https://git-scm.com/docs/git-http-backend):
 * GIT_PROJECT_ROOT and GIT_HTTP_EXPORT_ALL, and from the request PATH_INFO, REQUEST_METHOD, QUERY_STRING,
 * CONTENT_TYPE, REMOTE_USER, HTTP_CONTENT_ENCODING (a gzipped request body) and GIT_PROTOCOL (the
 * `Git-Protocol` header, which asks for protocol v2: the server passes it on as GIT_PROTOCOL, per the manual's
 * ENVIRONMENT section). Its standard output is a CGI answer: headers (`Status:` among them), a blank line, the
 * body.
 *
 * With `check`, the credentials are judged per repository and access instead (an App's installation token may
 * reach some repositories, read or write: `check` says), and a refused request is answered the same way.
 *
 * Every request is recorded with what it asked for: for an upload-pack POST (a fetch or clone), the protocol v2
 * command and how many `want` and `have` lines it sent. A fetch into an empty repository (a clone) sends wants
 * and no haves; a fetch into a repository that has commits already sends haves. `hold` keeps a matching
 * request unanswered until released; `hang` never answers matching requests (a remote that stopped
 * responding).
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { git } from './git-repo.js';
import { tempDir } from './harness.js';

export interface GitHttpRequest {
  method: string;
  /** The path, e.g. `/acme/widgets.git/info/refs`. */
  path: string;
  /** `git-upload-pack` (fetch, clone, ls-remote) or `git-receive-pack` (push), when the request names one. */
  service: string | null;
  /** The user name of accepted credentials; null when the request was refused 401. */
  user: string | null;
  /** `owner/repo` the path names (null for a path that names none). */
  repository: string | null;
  /** What the request needs: `write` for a push, `read` otherwise. */
  access: 'read' | 'write';
  /** The Basic credentials the request carried, accepted or not (null: none). */
  username: string | null;
  password: string | null;
  /** For upload-pack POSTs: the protocol v2 command (`ls-refs`, `fetch`), or `v0` for the older protocol. */
  command: string | null;
  wants: number;
  haves: number;
  /** Status answered; undefined while held or hung. */
  status?: number;
}

export interface HeldGitRequest {
  /** Resolves with the request once it arrived and is being held. */
  reached: Promise<GitHttpRequest>;
  /** Lets the held request through. */
  release(): void;
}

export interface GitHttp {
  /** Base URL: `<url>/<owner>/<repo>.git` is a repository. */
  url: string;
  /** The URL of `owner/repo` on this server. */
  urlOf(repository: string): string;
  /** The password every request must carry. */
  token: string;
  /** The directory that holds the repositories (`<root>/<owner>/<repo>.git`). */
  root: string;
  /**
   * A bare repository `owner/repo` (made on first call, branch `main`), the git directory returned. It answers
   * fetches of any reachable commit by id, as GitHub does.
   */
  repository(name: string): string;
  requests: GitHttpRequest[];
  /** The upload-pack fetches (a clone or a fetch, not a listing of refs) of `name`, oldest first. */
  fetches(name: string): GitHttpRequest[];
  /** The next request whose `METHOD path?query` matches is held until released. */
  hold(match: RegExp): HeldGitRequest;
  /** Every request whose `METHOD path?query` matches from now on is never answered. */
  hang(match: RegExp): void;
  close(): Promise<void>;
}

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/** The pkt-lines of a request body (gitprotocol-common(5)): 4 hex digits of length, then the payload. */
function pktLines(body: Buffer): string[] {
  const lines: string[] = [];
  let at = 0;
  while (at + 4 <= body.length) {
    const len = Number.parseInt(body.subarray(at, at + 4).toString('ascii'), 16);
    if (Number.isNaN(len)) break;
    if (len < 4) {
      at += 4; // flush, delimiter, response-end
      continue;
    }
    lines.push(body.subarray(at + 4, at + len).toString('utf8'));
    at += len;
  }
  return lines;
}

function describeUploadPack(body: Buffer): Pick<GitHttpRequest, 'command' | 'wants' | 'haves'> {
  const lines = pktLines(body);
  const command =
    lines
      .find((l) => l.startsWith('command='))
      ?.slice('command='.length)
      .trim() ?? 'v0';
  return {
    command,
    wants: lines.filter((l) => l.startsWith('want ')).length,
    haves: lines.filter((l) => l.startsWith('have ')).length,
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Judges a request's credentials for a repository and the access it needs. */
export type GitHttpCheck = (
  username: string,
  password: string,
  repository: string,
  access: 'read' | 'write',
) => boolean;

/** The Basic credentials a request carries, or nulls. */
function credentialsOf(req: IncomingMessage): { username: string | null; password: string | null } {
  const m = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  return colon < 0
    ? { username: null, password: null }
    : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

const REPOSITORY_PATH = /^\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)\.git(\/|$)/;

/** Runs the CGI for one request and writes its answer. */
function runBackend(
  root: string,
  req: IncomingMessage,
  res: ServerResponse,
  user: string,
  body: Buffer,
  call: GitHttpRequest,
): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const env: Record<string, string> = {
    ...GIT_ENV,
    HOME: root,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: decodeURIComponent(url.pathname),
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    CONTENT_LENGTH: String(body.length),
    REMOTE_USER: user,
    REMOTE_ADDR: '127.0.0.1',
    ...(req.headers['content-encoding']
      ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) }
      : {}),
    ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
  };
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', () => undefined);
  child.stdin.on('error', () => undefined);
  child.stdin.end(body);
  child.on('close', () => {
    const all = Buffer.concat(out);
    let split = all.indexOf('\r\n\r\n');
    let gap = 4;
    if (split < 0) {
      split = all.indexOf('\n\n');
      gap = 2;
    }
    const head = split < 0 ? all.toString('utf8') : all.subarray(0, split).toString('utf8');
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of head.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else headers[name] = value;
    }
    call.status = status;
    if (res.destroyed) return;
    res.writeHead(status, headers);
    res.end(split < 0 ? Buffer.alloc(0) : all.subarray(split + gap));
  });
}

/**
 * `root`: the directory of the repositories (default: a temporary one, removed by close()). `token`: the one
 * password every request must carry, unless `check` judges each request.
 */
export async function startGitHttp(
  opts: { token?: string; root?: string; check?: GitHttpCheck } = {},
): Promise<GitHttp> {
  const token = opts.token ?? 'ghs_FAKEgit0123456789abcdefghijklmnopqrstu';
  const tmp = tempDir('drydock-git-http-');
  const root = opts.root ?? join(tmp.path, 'repos');
  mkdirSync(root, { recursive: true });
  const accepts: GitHttpCheck = opts.check ?? ((_user, password) => password === token);
  const requests: GitHttpRequest[] = [];
  const holds: { match: RegExp; reached: (r: GitHttpRequest) => void; released: Promise<void> }[] = [];
  const hangs: RegExp[] = [];
  const sockets = new Set<Socket>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const service =
      url.searchParams.get('service') ??
      (/\/(git-upload-pack|git-receive-pack)$/.exec(url.pathname)?.[1] || null);
    const named = REPOSITORY_PATH.exec(url.pathname);
    const { username, password } = credentialsOf(req);
    const call: GitHttpRequest = {
      method,
      path: url.pathname,
      service,
      user: null,
      repository: named ? `${named[1]}/${named[2]}` : null,
      access: service === 'git-receive-pack' ? 'write' : 'read',
      username,
      password,
      command: null,
      wants: 0,
      haves: 0,
    };
    if (method === 'POST' && url.pathname.endsWith('/git-upload-pack')) {
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      Object.assign(call, describeUploadPack(body));
    }
    requests.push(call);
    const ok =
      username !== null &&
      password !== null &&
      call.repository !== null &&
      accepts(username, password, call.repository, call.access);
    const user = ok ? username : null;
    if (user === null) {
      call.status = 401;
      const wrong = req.headers.authorization !== undefined;
      res.writeHead(401, { 'www-authenticate': 'Basic realm="GitHub"', 'content-type': 'text/plain' });
      res.end(wrong ? 'Invalid username or password.\n' : '');
      return;
    }
    call.user = user;
    const line = `${method} ${url.pathname}${url.search}`;
    if (hangs.some((h) => h.test(line))) return;
    const held = holds.find((h) => h.match.test(line));
    if (held) {
      holds.splice(holds.indexOf(held), 1);
      held.reached(call);
      await held.released;
    }
    runBackend(root, req, res, user, raw, call);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    urlOf: (repository) => `${url}/${repository}.git`,
    token,
    root,
    repository(name) {
      const dir = join(root, `${name}.git`);
      mkdirSync(join(dir, '..'), { recursive: true });
      git(join(dir, '..'), 'init', '-q', '--bare', '-b', 'main', dir);
      // GitHub serves any commit reachable from its refs when it is asked for by id.
      git(dir, 'config', 'uploadpack.allowReachableSHA1InWant', 'true');
      return dir;
    },
    requests,
    fetches: (name) =>
      requests.filter(
        (r) => r.path === `/${name}.git/git-upload-pack` && r.command !== 'ls-refs' && r.wants > 0,
      ),
    hold(match) {
      let reached!: (r: GitHttpRequest) => void;
      let release!: () => void;
      const reachedP = new Promise<GitHttpRequest>((r) => {
        reached = r;
      });
      const released = new Promise<void>((r) => {
        release = r;
      });
      holds.push({ match, reached, released });
      return { reached: reachedP, release };
    },
    hang(match) {
      hangs.push(match);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      tmp.remove();
    },
  };
}
