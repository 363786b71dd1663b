import { Hono } from 'hono';
import { z } from 'zod';
import { DeliverRequestError } from '../../delivery/worker.js';
import { type ExecuteMode, PLAN_STATUSES, type Run } from '../../domain/types.js';
import { planContext } from '../../plans/context.js';
import { DecisionError } from '../../plans/decisions.js';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import {
  presentDecision,
  presentPlan,
  presentPlanContext,
  presentPlanSummary,
  presentRun,
} from '../present.js';

export const planListQuery = z.strictObject({
  status: z.enum(PLAN_STATUSES).optional(),
  session_id: z.string().max(100).optional(),
  job_id: z.string().max(100).optional(),
  trigger_id: z.string().max(100).optional(),
  requested_by: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
  /** List items carry a title; `include=markdown` adds each plan's full text. */
  include: z.enum(['markdown']).optional(),
});

// The `context` of GET /v1/plans/:id (presentPlanContext), as documented in the OpenAPI document; a test
// parses the served JSON with it. Times are ISO-8601 UTC strings.
const time = z.string();
const usage = z.record(z.string(), z.number());
export const planContextSchema = z.strictObject({
  source: z
    .strictObject({
      kind: z.enum(['job', 'trigger', 'pull_request', 'manual']),
      run_id: z.string(),
      requested_by: z.string(),
      prompt: z
        .string()
        .describe('the instructions the agent was given (a trigger: without its external data)'),
      job: z
        .strictObject({
          id: z.string(),
          exists: z.boolean(),
          cron: z.string().nullable(),
          timezone: z.string().nullable(),
          slot_at: time.nullable(),
          coalesced_slots: z.number(),
        })
        .nullable(),
      trigger: z
        .strictObject({
          id: z.string(),
          name: z.string().nullable(),
          kind: z.string().nullable(),
          exists: z.boolean(),
        })
        .nullable(),
      delivery: z
        .strictObject({
          id: z.string(),
          source: z.enum(['github', 'fire']),
          key: z.string(),
          event: z.string(),
          outcome: z.string(),
          received_at: time,
        })
        .nullable(),
      fired_text: z.string().nullable().describe('external: the text the trigger was fired with'),
      pull_request: z
        .strictObject({
          repository: z.string(),
          number: z.number(),
          title: z.string().nullable().describe('external'),
          html_url: z.string().nullable().describe('external; only http(s) URLs are kept'),
          author: z.string().nullable().describe('external'),
          head_ref: z.string(),
          base_ref: z.string(),
          head_sha: z.string(),
          base_sha: z.string().nullable(),
          draft: z.boolean().nullable(),
          labels: z.array(z.string()),
        })
        .nullable(),
    })
    .nullable(),
  rounds: z.array(
    z.strictObject({
      round: z.number(),
      plan_id: z.string(),
      run_id: z.string(),
      status: z.enum(PLAN_STATUSES),
      created_at: time,
      feedback: z.strictObject({ identity: z.string(), comment: z.string().nullable(), at: time }).nullable(),
    }),
  ),
  files: z.array(
    z.strictObject({
      tool: z.enum(['Read', 'Grep', 'Glob']),
      path: z.string().nullable(),
      pattern: z.string().nullable(),
      glob: z.string().nullable(),
      round: z.number(),
      calls: z.number(),
      errors: z.number(),
    }),
  ),
  questions: z.array(
    z.strictObject({
      id: z.string(),
      run_id: z.string(),
      round: z.number(),
      status: z.string(),
      created_at: time,
      resolved_at: time.nullable(),
      answered_by: z.string().nullable(),
      items: z.array(
        z.strictObject({
          question: z.string(),
          header: z.string().nullable(),
          multi_select: z.boolean(),
          options: z.array(z.string()),
          answer: z.union([z.string(), z.array(z.string())]).nullable(),
        }),
      ),
    }),
  ),
  cost: z.strictObject({
    runs: z.array(
      z.strictObject({
        round: z.number(),
        run_id: z.string(),
        status: z.string(),
        model: z.string().nullable(),
        turns: z.number(),
        usage,
        cost_usd: z.number(),
      }),
    ),
    total: z.strictObject({ turns: z.number(), usage, cost_usd: z.number() }),
  }),
  decisions: z.array(
    z.strictObject({
      id: z.string(),
      kind: z.enum(['approve', 'reject', 'revise']),
      identity: z.string(),
      comment: z.string().nullable(),
      sha256: z.string(),
      created_at: time,
    }),
  ),
  diff: z
    .strictObject({
      previous_plan_id: z.string(),
      previous_round: z.number(),
      added: z.number(),
      removed: z.number(),
      hunks: z.array(
        z.strictObject({
          old_start: z.number(),
          old_lines: z.number(),
          new_start: z.number(),
          new_lines: z.number(),
          lines: z.array(
            z.strictObject({
              op: z.enum(['same', 'add', 'remove']),
              text: z.string(),
              old_line: z.number().nullable(),
              new_line: z.number().nullable(),
            }),
          ),
        }),
      ),
    })
    .nullable(),
});

/** GET /v1/plans/:id: the plan's fields (as in the listing), its decisions and runs, and its context. */
export const planDetailSchema = z.looseObject({
  id: z.string(),
  markdown: z.string(),
  sha256: z.string(),
  decisions: z.array(z.unknown()),
  runs: z.array(z.unknown()),
  context: planContextSchema,
});

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected the plan sha256 (64 hex characters)');
export const approveBody = z.strictObject({
  sha256: sha256.optional(),
  comment: z.string().max(10_000).optional(),
});
export const rejectBody = z.strictObject({
  comment: z.string().trim().min(1, 'a rejection needs a comment').max(10_000),
});
export const reviseBody = z.strictObject({
  feedback: z.string().trim().min(1, 'a revision needs feedback').max(20_000),
  sha256: sha256.optional(),
});

export function planRoutes(deps: AppDeps): Hono<Env> {
  const { store } = deps;
  const app = new Hono<Env>();

  /** The queue, oldest first. */
  // The queue's pages are read far more often than the queue changes. A page is kept for up to a second
  // and only while the plans version (moved by every plan or decision write, from any process) is the one
  // it was built at.
  const pages = new Map<string, { version: number; at: number; body: string }>();

  app.get('/', async (c) => {
    const q = query(c, planListQuery);
    const now = deps.clock.now();
    const key = new URL(c.req.url).search;
    const version = await store.plansVersion();
    const cached = pages.get(key);
    if (cached && cached.version === version && now - cached.at < 1_000 && now >= cached.at) {
      return c.body(cached.body, 200, { 'content-type': 'application/json' });
    }
    const page = await store.listPlans({
      status: q.status,
      activeAt: now,
      summary: q.include !== 'markdown',
      sessionId: q.session_id,
      jobId: q.job_id,
      triggerId: q.trigger_id,
      requestedBy: q.requested_by,
      limit: q.limit,
      cursor: q.cursor,
    });
    const present = q.include === 'markdown' ? presentPlan : presentPlanSummary;
    const body = JSON.stringify({
      items: page.items.map((p) => present(p, now)),
      next_cursor: page.nextCursor,
    });
    if (pages.size >= 200) pages.delete(pages.keys().next().value!);
    pages.set(key, { version, at: now, body });
    return c.body(body, 200, { 'content-type': 'application/json' });
  });

  app.get('/:id', async (c) => {
    const plan = await store.getPlan(c.req.param('id'));
    if (!plan) throw notFound('plan', c.req.param('id'));
    const [decisions, runs, context] = await Promise.all([
      store.listDecisions(plan.id),
      store.listPlanRuns(plan),
      planContext(store, plan),
    ]);
    return c.json({
      ...presentPlan(plan, deps.clock.now()),
      decisions: decisions.map(presentDecision),
      runs: runs.map(presentRun),
      // What an approver reads beside the plan: source, files read, questions, cost, the previous round's diff.
      context: presentPlanContext(context),
    });
  });

  const decide = (kind: 'approve' | 'reject' | 'revise') =>
    app.post(`/:id/${kind}`, requires('decide'), async (c) => {
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
      try {
        const out = await deps.plans.decide(c.req.param('id'), kind, { identity, ...input });
        return c.json({
          plan: presentPlan(out.plan, deps.clock.now()),
          decision: presentDecision(out.decision),
          run: out.run ? presentRun(out.run) : null,
          ...(out.run ? { next: nextStep(out.run, out.plan.executeMode) } : {}),
        });
      } catch (err) {
        if (err instanceof DecisionError) throw new HttpError(err.status, err.code, err.message);
        throw err;
      }
    });
  /** What happens next, in words: the run that was started, and where it will wait for people. */
  const nextStep = (run: Run, mode: ExecuteMode) =>
    run.phase === 'execute'
      ? `execute run ${run.id} carries out the plan in ${mode} mode${
          mode === 'manual'
            ? ': each Write, Edit and Bash call waits for a person to allow it'
            : mode === 'edits'
              ? ': each Bash command waits for a person to allow it'
              : ': commands outside the allow-list wait for a person'
        }; see them with drydock tool-approvals list --run ${run.id} (GET /v1/tool-approvals?run_id=${run.id}), follow the run with drydock runs show ${run.id}`
      : `revision run ${run.id} plans again with the feedback; follow it with drydock runs show ${run.id}`;

  decide('approve');
  decide('reject');
  decide('revise');

  /** Delivers an executed plan now: a failed delivery tried again, or one that was never asked for. */
  app.post('/:id/deliver', requires('decide'), async (c) => {
    if (!deps.delivery) throw new HttpError(503, 'unavailable', 'delivery is not running in this daemon');
    try {
      const plan = await deps.delivery.requestDelivery(c.req.param('id'));
      return c.json(presentPlan(plan, deps.clock.now()), 202);
    } catch (err) {
      if (err instanceof DeliverRequestError) {
        throw new HttpError(err.status, err.status === 404 ? 'not_found' : 'conflict', err.message);
      }
      throw err;
    }
  });
  return app;
}
