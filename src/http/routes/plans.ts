import { type Handler, Hono } from 'hono';
import type { z } from 'zod';
import type { DecisionKind, ExecuteMode, Run } from '../../domain/types.js';
import { planContext } from '../../plans/plan-context.js';
import { pendingFreshness } from '../../plans/staleness.js';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { approveBody, planListQuery, rejectBody, reviseBody } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import {
  presentDecision,
  presentFreshness,
  presentPlan,
  presentPlanContext,
  presentPlanSummary,
  presentRun,
} from '../present.js';

export function planRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.get('/', queueRoute(deps));

  app.get('/:id', async (c) => {
    const { store } = deps;
    const plan = await store.getPlan(c.req.param('id'));
    if (!plan) throw notFound('plan', c.req.param('id'));
    const now = deps.clock.now();
    const [decisions, runs, context, freshness] = await Promise.all([
      store.listDecisions(plan.id),
      store.listPlanRuns(plan),
      planContext(store, plan),
      pendingFreshness(store, plan, now),
    ]);
    return c.json({
      ...presentPlan(plan, now),
      freshness: freshness && presentFreshness(plan, freshness),
      decisions: decisions.map(presentDecision),
      runs: runs.map(presentRun),
      // What an approver reads beside the plan: source, files read, questions, cost, the previous round's diff.
      context: presentPlanContext(context),
    });
  });

  // Who may approve, and the quorum, are the plan policy's (src/plans/policy.ts), applied by the decision:
  // a refusal comes back as its error (403 self_approval, 409 already_approved, …).
  for (const kind of ['approve', 'reject', 'revise'] as const) {
    app.post(`/:id/${kind}`, requires('decide'), decideRoute(deps, kind));
  }

  /** Delivers an executed plan now: a failed delivery tried again, or one that was never asked for. */
  app.post('/:id/deliver', requires('decide'), async (c) => {
    if (!deps.delivery) throw new HttpError(503, 'unavailable', 'delivery is not running in this daemon');
    const plan = await deps.delivery.requestDelivery(c.req.param('id'));
    return c.json(presentPlan(plan, deps.clock.now()), 202);
  });
  return app;
}

/**
 * The queue, oldest first (`order=newest`: newest first). Its pages are read far more often than the queue changes: a page is kept for up
 * to a second and only while the plans version (moved by every plan or decision write, from any process)
 * is the one it was built at.
 */
function queueRoute(deps: AppDeps): Handler<Env> {
  const { store } = deps;
  const pages = new Map<string, { version: number; at: number; body: string }>();
  // A page being built, per query: requests that miss the cache at the same version wait for that one build
  // rather than each reading and presenting the same page.
  const building = new Map<string, { version: number; body: Promise<string> }>();
  return async (c) => {
    const q = query(c, planListQuery);
    const now = deps.clock.now();
    const key = new URL(c.req.url).search;
    const version = await store.plansVersion();
    const cached = pages.get(key);
    if (cached && cached.version === version && now - cached.at < 1_000 && now >= cached.at) {
      return c.body(cached.body, 200, { 'content-type': 'application/json' });
    }
    const inFlight = building.get(key);
    if (inFlight && inFlight.version === version) {
      return c.body(await inFlight.body, 200, { 'content-type': 'application/json' });
    }
    const body = queuePage(deps, q, now);
    building.set(key, { version, body });
    try {
      const text = await body;
      if (pages.size >= 200) pages.delete(pages.keys().next().value!);
      pages.set(key, { version, at: now, body: text });
      return c.body(text, 200, { 'content-type': 'application/json' });
    } finally {
      if (building.get(key)?.body === body) building.delete(key);
    }
  };
}

type PlanListQuery = z.infer<typeof planListQuery>;

/** One page of the queue, as its answer's text. */
async function queuePage(deps: AppDeps, q: PlanListQuery, now: number): Promise<string> {
  const page = await deps.store.listPlans({
    status: q.status,
    activeAt: now,
    summary: q.include !== 'markdown',
    sessionId: q.session_id,
    jobId: q.job_id,
    triggerId: q.trigger_id,
    requestedBy: q.requested_by,
    order: q.order,
    limit: q.limit,
    cursor: q.cursor,
  });
  const present = q.include === 'markdown' ? presentPlan : presentPlanSummary;
  return JSON.stringify({
    items: page.items.map((p) => present(p, now)),
    next_cursor: page.nextCursor,
  });
}

/** POST /v1/plans/:id/{approve,reject,revise}: the decision, the plan after it, and the run it started. */
function decideRoute(deps: AppDeps, kind: DecisionKind): Handler<Env, '/:id'> {
  return async (c) => {
    const identity = c.get('identity').identity;
    const input =
      kind === 'approve'
        ? await jsonBody(c, approveBody)
        : kind === 'reject'
          ? await jsonBody(c, rejectBody, 'to reject')
          : await jsonBody(c, reviseBody, 'to ask for a revision').then((b) => ({
              comment: b.feedback,
              sha256: b.sha256,
            }));
    const out = await deps.plans.decide(c.req.param('id'), kind, { identity, ...input });
    return c.json({
      plan: presentPlan(out.plan, deps.clock.now()),
      decision: presentDecision(out.decision),
      run: out.run ? presentRun(out.run) : null,
      ...(out.run ? { next: nextStep(out.run, out.plan.executeMode) } : {}),
    });
  };
}

/** What happens next, in words: the run that was started, and where it will wait for people. */
function nextStep(run: Run, mode: ExecuteMode): string {
  return run.phase === 'execute'
    ? `execute run ${run.id} carries out the plan in ${mode} mode${
        mode === 'manual'
          ? ': each Write, Edit and Bash call waits for a person to allow it'
          : mode === 'edits'
            ? ': each Bash command waits for a person to allow it'
            : ': commands outside the allow-list wait for a person'
      }; see them with drydock tool-approvals list --run ${run.id} (GET /v1/tool-approvals?run_id=${run.id}), follow the run with drydock runs follow ${run.id}`
    : `revision run ${run.id} plans again with the feedback; follow it with drydock runs follow ${run.id}`;
}
