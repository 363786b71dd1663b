/**
 * A git remote over smart HTTP that checks credentials as GitHub does: `git http-backend` (git's own CGI server,
 * git-http-backend(1)) behind a `node:http` server on 127.0.0.1, serving the bare repositories under `root`
 * (`root/owner/repo.git` at `http://127.0.0.1:PORT/owner/repo.git`).
 *
 * Every request must carry HTTP Basic credentials that `check` accepts for the repository and the access the
 * request needs (`write` for a push, `read` for a fetch); otherwise it is answered 401 with a Basic challenge,
 * which is how git learns to ask its GIT_ASKPASS program, and after which git gives up with "Authentication
 * failed". GitHub takes an installation token as the password with the user `x-access-token`
 * (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation).
 * What each request carried is recorded.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface GitHttpRequest {
  method: string;
  path: string;
  repository: string;
  access: 'read' | 'write';
  username: string | null;
  password: string | null;
  status: number;
}

export interface GitHttpServer {
  url: string;
  /** The URL of `owner/repo` on this server. */
  urlOf(repository: string): string;
  requests: GitHttpRequest[];
  close(): Promise<void>;
}

const PATH = /^\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)\.git(\/.*)$/;

export async function startGitHttp(opts: {
  root: string;
  check: (username: string, password: string, repository: string, access: 'read' | 'write') => boolean;
}): Promise<GitHttpServer> {
  const requests: GitHttpRequest[] = [];
  const sockets = new Set<Socket>();

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const m = PATH.exec(url.pathname);
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const repository = `${m[1]}/${m[2]}`;
    const push = url.searchParams.get('service') === 'git-receive-pack' || m[3] === '/git-receive-pack';
    const access = push ? 'write' : 'read';
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : null;
    const colon = decoded?.indexOf(':') ?? -1;
    const username = decoded && colon >= 0 ? decoded.slice(0, colon) : null;
    const password = decoded && colon >= 0 ? decoded.slice(colon + 1) : null;
    const ok = username !== null && password !== null && opts.check(username, password, repository, access);
    const record: GitHttpRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      repository,
      access,
      username,
      password,
      status: ok ? 200 : 401,
    };
    requests.push(record);
    if (!ok) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="GitHub"', 'content-type': 'text/plain' });
      res.end('Invalid username or token.\n');
      return;
    }
    cgi(req, res, url, `/${m[1]}/${m[2]}.git${m[3]}`, username!, (status) => {
      record.status = status;
    });
  };

  const cgi = (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    pathInfo: string,
    user: string,
    answered: (status: number) => void,
  ) => {
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: opts.root,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_PROJECT_ROOT: opts.root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: pathInfo,
        QUERY_STRING: url.search.replace(/^\?/, ''),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
          : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (/^status$/i.test(name)) status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      answered(status);
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => {
      if (!started) res.writeHead(500);
      res.end();
    });
  };

  const server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closing: Promise<void> | null = null;
  return {
    url,
    urlOf: (repository) => `${url}/${repository}.git`,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
