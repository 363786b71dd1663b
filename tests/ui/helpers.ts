import { createHash } from 'node:crypto';
import type { Hono } from 'hono';
import type { PlanFootprint } from '../../src/domain/footprint.js';
import type { Plan, Run } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import type { NewRun } from '../../src/store/store.js';
import type { Harness } from '../support/harness.js';

export interface UiResponse {
  status: number;
  text: string;
  headers: Headers;
  /** Set-Cookie lines. */
  cookies: string[];
}

export interface UiRequest {
  cookie?: string;
  form?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  base?: string;
}

/** One request to the app without a port, the way a browser would send a page or a form. */
export async function ui(
  app: Hono<any>,
  method: string,
  path: string,
  o: UiRequest = {},
): Promise<UiResponse> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.cookie) headers.cookie = o.cookie;
  let body: string | undefined;
  if (o.form) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(o.form))
      for (const x of Array.isArray(v) ? v : [v]) params.append(k, x);
    body = params.toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
    // As a browser sends a form (the page refuses a body without its length).
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const res = await app.request(`${o.base ?? 'http://localhost'}${path}`, { method, headers, body });
  return {
    status: res.status,
    text: await res.text(),
    headers: res.headers,
    cookies: res.headers.getSetCookie(),
  };
}

/** The value of the hidden csrf field in a page. */
export function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no csrf field in the page');
  return m[1]!;
}

/** `name=value` of a Set-Cookie line for `name`. */
export function cookieOf(cookies: string[], name: string): string | undefined {
  const line = cookies.find((c) => c.startsWith(`${name}=`));
  return line?.split(';')[0];
}

/** Signs in through the form; returns the session cookie and the CSRF token of the signed-in pages. */
export async function signIn(app: Hono<any>, token: string): Promise<{ cookie: string; csrf: string }> {
  const form = await ui(app, 'GET', '/ui/login');
  const login = cookieOf(form.cookies, 'drydock_ui_login')!;
  const res = await ui(app, 'POST', '/ui/login', {
    cookie: login,
    form: { csrf: csrfOf(form.text), token, next: '/ui' },
  });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${res.text}`);
  const cookie = cookieOf(res.cookies, 'drydock_ui')!;
  const queue = await ui(app, 'GET', '/ui', { cookie });
  return { cookie, csrf: csrfOf(queue.text) };
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A session, a finished plan-phase run and its pending plan, requested by `requestedBy`. */
export async function seedPlan(
  h: Harness,
  o: {
    markdown?: string;
    requestedBy?: string;
    createdAt?: number;
    /** Fields of the plan-phase run (a trigger, a delivery, a pull request checkout, a job, its prompt). */
    run?: Partial<NewRun>;
    approvalsRequired?: number;
    workspaceCommit?: string | null;
    subject?: string | null;
    triggerId?: string | null;
    /** The host names the execution's commands may reach (default none). */
    network?: string[];
    /** What the plan phase read (smart staleness); default none recorded. */
    footprint?: PlanFootprint | null;
  } = {},
): Promise<{ plan: Plan; run: Run }> {
  const now = h.clock.now();
  const session = await h.store.createSession({
    id: newId('ses'),
    name: 'nightly-review',
    workspace: h.workspace,
    owner: o.requestedBy ?? 'operator-user',
    defaults: {},
    createdAt: now,
  });
  const run = await h.store.createRun({
    id: newId('run'),
    sessionId: session.id,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'Plan something',
    requestedBy: o.requestedBy ?? 'operator-user',
    createdAt: now,
    ...o.run,
  });
  await h.store.transitionRun(run.id, ['queued'], 'planned', { startedAt: now, finishedAt: now });
  const markdown = o.markdown ?? '# Add a cache\n\n1. Add an LRU.\n';
  const plan = await h.store.createPlan({
    id: newId('pln'),
    runId: run.id,
    sessionId: session.id,
    conversationId: run.id,
    toolUseId: 'toolu_plan',
    markdown,
    sha256: sha256(markdown),
    workspaceCommit: o.workspaceCommit ?? null,
    status: 'pending_approval',
    round: 1,
    previousPlanId: null,
    requestedBy: o.requestedBy ?? 'operator-user',
    createdAt: o.createdAt ?? now,
    jobId: o.run?.jobId ?? null,
    triggerId: o.triggerId ?? o.run?.triggerId ?? null,
    source: o.run?.source ?? 'manual',
    expiresAt: now + 86_400_000,
    approvalsRequired: o.approvalsRequired ?? 1,
    allowSelfApproval: false,
    executeMode: 'manual',
    network: o.network ?? [],
    owner: o.requestedBy ?? 'operator-user',
    decidedAt: null,
    failureReason: null,
    subject: o.subject ?? null,
    footprint: o.footprint ?? null,
  });
  await h.store.updateRun(run.id, { planId: plan.id });
  return { plan, run: (await h.store.getRun(run.id))! };
}

/** A pending tool approval of the plan's run. */
export function seedToolApproval(
  h: Harness,
  plan: Plan,
  run: Run,
  call: { toolUseId: string; tool: string; input: unknown },
) {
  const now = h.clock.now();
  return h.store.createToolApproval({
    id: newId('tap'),
    runId: run.id,
    sessionId: run.sessionId,
    planId: plan.id,
    ...call,
    priorResults: [],
    inputSha256: null,
    createdAt: now,
    expiresAt: now + 3600_000,
  });
}
