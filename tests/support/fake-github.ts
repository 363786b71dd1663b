/**
 * A stand-in for the GitHub REST API: a real `node:http` server on 127.0.0.1 serving the calls drydock makes,
 * so tests drive the unmodified Octokit client through `baseUrl`.
 *
 *   POST /repos/:owner/:repo/issues/:n/comments   201, the comment
 *   POST /repos/:owner/:repo/statuses/:sha        201, the status
 *   GET  /repos/:owner/:repo/pulls/:n             200 from a fixture (`setPullRequest`), else 404
 *
 * Every request is recorded (method, path, parsed body, headers, status answered). Requests must carry
 * `Authorization: token <t>` or `Bearer <t>` with the configured token (401 otherwise). `fail` scripts
 * failures (500, 403 with retry-after, ...) consumed by the next matching requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface GithubCall {
  method: string;
  path: string;
  body: any;
  headers: Record<string, string | string[] | undefined>;
  /** Status answered (set when the answer is sent). */
  status?: number;
  receivedAt: number;
}

export interface ScriptedFailure {
  status: number;
  /** Sent as `retry-after` (seconds). */
  retryAfter?: number;
  message?: string;
  headers?: Record<string, string>;
  /** Only requests whose `METHOD path` matches (default: any). */
  match?: RegExp;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface FakeGithub {
  url: string;
  token: string;
  calls: GithubCall[];
  /** The pull request `GET /repos/:repo/pulls/:n` returns. */
  setPullRequest(repository: string, number: number, data: Record<string, unknown>): void;
  /** The next matching requests fail (scripts are consumed in order). */
  fail(...failures: ScriptedFailure[]): void;
  /** Comments posted successfully, oldest first. */
  comments(repository?: string, number?: number): { repository: string; number: number; body: string }[];
  /** Statuses set successfully, oldest first. */
  statuses(
    sha?: string,
  ): { repository: string; sha: string; state: string; context: string; description: string }[];
  /** Polls until `check` is truthy (fails after `ms`). */
  waitFor<T>(check: () => T | undefined | null | false, ms?: number, what?: string): Promise<T>;
  close(): Promise<void>;
}

const REPO = '([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)';
const COMMENTS = new RegExp(`^/repos/${REPO}/issues/(\\d+)/comments$`);
const STATUSES = new RegExp(`^/repos/${REPO}/statuses/([0-9a-f]{40})$`);
const PULL = new RegExp(`^/repos/${REPO}/pulls/(\\d+)$`);
const STATES = new Set(['error', 'failure', 'pending', 'success']);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeGithub(opts: { token: string }): Promise<FakeGithub> {
  const calls: GithubCall[] = [];
  const pulls = new Map<string, Record<string, unknown>>();
  const failures: (ScriptedFailure & { left: number })[] = [];
  const posted: { repository: string; number: number; body: string }[] = [];
  const statuses: { repository: string; sha: string; state: string; context: string; description: string }[] =
    [];
  const sockets = new Set<Socket>();
  let nextId = 1;

  const send = (call: GithubCall, res: ServerResponse, status: number, body: unknown, headers = {}) => {
    call.status = status;
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(payload)),
      'x-github-request-id': `FAKE:${nextId++}`,
      ...headers,
    });
    res.end(payload);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const method = req.method ?? 'GET';
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const call: GithubCall = { method, path, body, headers: { ...req.headers }, receivedAt: Date.now() };
    calls.push(call);

    const auth = req.headers.authorization ?? '';
    const m = /^(token|bearer)\s+(\S+)$/i.exec(auth);
    if (!m || m[2] !== opts.token) {
      send(call, res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
      return;
    }
    const failure = failures.find((f) => !f.match || f.match.test(`${method} ${path}`));
    if (failure) {
      failure.left -= 1;
      if (failure.left <= 0) failures.splice(failures.indexOf(failure), 1);
      const headers: Record<string, string> = { ...failure.headers };
      if (failure.retryAfter !== undefined) headers['retry-after'] = String(failure.retryAfter);
      send(
        call,
        res,
        failure.status,
        {
          message: failure.message ?? `fake-github: scripted ${failure.status}`,
          status: String(failure.status),
        },
        headers,
      );
      return;
    }

    let hit = COMMENTS.exec(path);
    if (hit && method === 'POST') {
      if (typeof body?.body !== 'string' || body.body === '') {
        send(call, res, 422, { message: 'Validation Failed', errors: [{ field: 'body', code: 'missing' }] });
        return;
      }
      if (body.body.length > 65_536) {
        send(call, res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'IssueComment', code: 'custom', field: 'body', message: 'body is too long' }],
        });
        return;
      }
      const repository = `${hit[1]}/${hit[2]}`;
      const number = Number(hit[3]);
      posted.push({ repository, number, body: body.body });
      const id = nextId++;
      send(call, res, 201, {
        id,
        node_id: `IC_${id}`,
        url: `${'https://api.github.com'}/repos/${repository}/issues/comments/${id}`,
        html_url: `https://github.com/${repository}/pull/${number}#issuecomment-${id}`,
        body: body.body,
        user: { login: 'drydock-bot', type: 'Bot' },
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      });
      return;
    }
    hit = STATUSES.exec(path);
    if (hit && method === 'POST') {
      const description = typeof body?.description === 'string' ? body.description : '';
      if (!STATES.has(body?.state) || description.length >= 140) {
        send(call, res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'Status', code: 'invalid' }],
        });
        return;
      }
      const entry = {
        repository: `${hit[1]}/${hit[2]}`,
        sha: hit[3]!,
        state: body.state as string,
        context: typeof body.context === 'string' ? body.context : 'default',
        description,
      };
      statuses.push(entry);
      const id = nextId++;
      send(call, res, 201, { id, ...entry, created_at: new Date().toISOString() });
      return;
    }
    hit = PULL.exec(path);
    if (hit && method === 'GET') {
      const pr = pulls.get(`${hit[1]}/${hit[2]}#${hit[3]}`);
      if (pr) send(call, res, 200, pr);
      else send(call, res, 404, { message: 'Not Found', status: '404' });
      return;
    }
    send(call, res, 404, { message: 'Not Found', status: '404' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;

  return {
    url: `http://127.0.0.1:${port}`,
    token: opts.token,
    calls,
    setPullRequest(repository, number, data) {
      pulls.set(`${repository}#${number}`, data);
    },
    fail(...more) {
      for (const f of more) failures.push({ ...f, left: f.times ?? 1 });
    },
    comments(repository, number) {
      return posted.filter(
        (c) => (!repository || c.repository === repository) && (number === undefined || c.number === number),
      );
    },
    statuses(sha) {
      return statuses.filter((s) => !sha || s.sha === sha);
    },
    async waitFor(check, ms = 10_000, what = 'condition') {
      const end = Date.now() + ms;
      for (;;) {
        const v = check();
        if (v) return v;
        if (Date.now() > end) throw new Error(`fake-github: timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
