import { z } from 'zod';
import {
  DELIVERY_TARGETS,
  type DecisionKind,
  EXECUTE_MODES,
  PLAN_DELIVERY_STATUSES,
  PLAN_STATUSES,
} from '../../domain/types.js';
import { cursor, limit, pageOf, runSourceSchema, time, usage } from './common.js';
import { runSchema } from './runs.js';

// /v1/plans: the approval queue, one plan with what an approver reads beside it, and the decisions.

export const PLAN_LIST_ORDERS = ['oldest', 'newest'] as const;

export const planListQuery = z.strictObject({
  status: z.enum(PLAN_STATUSES).optional(),
  session_id: z.string().max(100).optional(),
  job_id: z.string().max(100).optional(),
  trigger_id: z.string().max(100).optional(),
  requested_by: z.string().max(200).optional(),
  limit,
  cursor,
  /** List items carry a title; `include=markdown` adds each plan's full text. */
  include: z.enum(['markdown']).optional(),
  order: z
    .enum(PLAN_LIST_ORDERS)
    .optional()
    .describe(
      'oldest (the default): the oldest plan first, as a queue is worked through; newest: the newest first. A cursor continues the listing in the order it was made in',
    ),
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

/** Where an executed plan's result went; null while not looked at, or when delivery is off. */
export const planDeliverySchema = z.strictObject({
  status: z.enum(PLAN_DELIVERY_STATUSES).exclude(['off']),
  target: z
    .enum(DELIVERY_TARGETS)
    .nullable()
    .describe(
      'base: a pull request into the base (for a pull request run, only drydock commit replayed onto it); head: a commit on the pull request branch; stacked: a pull request into that branch; patch: a comment with the change; null until decided',
    ),
  branch: z.string().nullable(),
  remote: z.string().nullable(),
  commit: z.string().nullable(),
  pushed_at: time.nullable(),
  pull_request_url: z.string().nullable(),
  pull_request_number: z.number().nullable(),
  comment_url: z.string().nullable(),
  attempts: z.number(),
  last_error: z.string().nullable(),
  next_attempt_at: time.nullable(),
});

export type PlanDeliveryJson = z.infer<typeof planDeliverySchema>;

export const planSchema = z.strictObject({
  id: z.string(),
  status: z.enum(PLAN_STATUSES).describe('a pending plan past its expiry shows expired'),
  round: z.number(),
  previous_plan_id: z.string().nullable(),
  session_id: z.string(),
  job_id: z.string().nullable(),
  trigger_id: z.string().nullable(),
  source: runSourceSchema,
  run_id: z.string(),
  requested_by: z.string(),
  owner: z.string(),
  markdown: z.string(),
  sha256: z.string(),
  workspace_commit: z.string().nullable(),
  execution_base: z
    .string()
    .nullable()
    .describe(
      'the head the workspace had moved on to when the plan was approved, touching nothing it read: its execution starts there; null: on workspace_commit',
    ),
  uncommitted_changes: z
    .strictObject({
      count: z.number().describe('how many paths of the workspace differed from workspace_commit'),
      paths: z
        .array(z.string())
        .describe(
          'the first of them (at most 20, sorted), relative to the workspace; an untracked directory ends in /',
        ),
      message: z.string().describe('the notice the plan page shows'),
    })
    .nullable()
    .describe(
      'what the git workspace had uncommitted (modified, staged or untracked files) when the plan phase began: the plan was made from workspace_commit without it; null: nothing (or not a git workspace)',
    ),
  approvals_required: z.number(),
  approvals: z.number().describe('distinct approvals so far'),
  allow_self_approval: z.boolean(),
  execute_mode: z.enum(EXECUTE_MODES),
  network: z
    .boolean()
    .meta({ deprecated: true })
    .describe('whether network_domains is not empty (deprecated: read network_domains)'),
  network_domains: z
    .array(z.string())
    .describe("the host names the execution's commands may reach through the egress proxy; [] for none"),
  created_at: time,
  expires_at: time,
  decided_at: time.nullable(),
  failure_reason: z.string().nullable(),
  delivery: planDeliverySchema.nullable(),
});
export type PlanJson = z.infer<typeof planSchema>;

/** A plan in the queue: its title (the first line) instead of its text. */
export const planSummarySchema = planSchema.omit({ markdown: true }).extend({ title: z.string() });
export type PlanSummaryJson = z.infer<typeof planSummarySchema>;

/** GET /v1/plans: summaries, or whole plans with include=markdown. */
export const planListSchema = pageOf(z.union([planSummarySchema, planSchema]));

export const DECISION_KINDS = ['approve', 'reject', 'revise'] as const satisfies readonly DecisionKind[];

export const decisionSchema = z.strictObject({
  id: z.string(),
  kind: z.enum(DECISION_KINDS),
  identity: z.string(),
  comment: z.string().nullable(),
  sha256: z.string(),
  created_at: time,
});
export type DecisionJson = z.infer<typeof decisionSchema>;

// The `context` of GET /v1/plans/:id (presentPlanContext), as documented in the OpenAPI document; a test
// parses the served JSON with it.
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
  /** The MCP calls of the planning runs: server, tool, input summary (external: the model's input). */
  mcp_calls: z.array(
    z.strictObject({
      server: z.string(),
      tool: z.string(),
      input: z.string(),
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
  decisions: z.array(decisionSchema),
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

export type PlanContextJson = z.infer<typeof planContextSchema>;

/** Whether a plan may still be approved against its workspace's head now (src/plans/staleness.ts). */
export const freshnessSchema = z.strictObject({
  state: z
    .enum(['current', 'moved_on', 'stale'])
    .describe(
      "current: the head is the plan's commit; moved_on: it moved, but no commit since changes what the plan read, searched or names (approvable, executes on the new head); stale: approving is refused (409 stale)",
    ),
  head: z.string().nullable().describe("the workspace's head now (null: no commit)"),
  commits_behind: z
    .number()
    .nullable()
    .describe("commits on the head since the plan's commit; null when that commit is not in its history"),
  changed_read_files: z
    .array(z.string())
    .describe('the changed paths that made it stale (workspace-relative, at most 20)'),
  reason: z
    .enum(['footprint_changed', 'base_gone', 'no_footprint'])
    .nullable()
    .describe(
      'why it is stale: a commit changed what it read or touches; its commit is no longer in the history of the head (rewritten, force-pushed); or what it read was not recorded (an older plan, or an MCP tool whose reads are unknown)',
    ),
  message: z.string().describe('the same, in a sentence'),
});
export type FreshnessJson = z.infer<typeof freshnessSchema>;

/** GET /v1/plans/:id: the plan, its decisions and runs, and its context. */
export const planDetailSchema = planSchema.extend({
  decisions: z.array(decisionSchema),
  runs: z.array(runSchema),
  context: planContextSchema,
  freshness: freshnessSchema
    .nullable()
    .describe(
      'for a pending plan made against a commit of a git workspace: whether it may still be approved; null otherwise (a plain workspace, a pull request plan, a decided plan)',
    ),
});
export type PlanDetailJson = z.infer<typeof planDetailSchema>;

/** POST /v1/plans/:id/approve|reject|revise: the plan, the decision, and the run it started (with what comes next). */
export const decideResultSchema = z.strictObject({
  plan: planSchema,
  decision: decisionSchema,
  run: runSchema.nullable(),
  next: z.string().optional().describe('what happens next, in words (when a run was started)'),
});
export type DecideResultJson = z.infer<typeof decideResultSchema>;
