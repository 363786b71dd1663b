import { z } from 'zod';
import { autoModeBody } from './routes/admin.js';
import { deliveryListQuery } from './routes/deliveries.js';
import { notificationListQuery } from './routes/notifications.js';
import { approveBody, planDetailSchema, planListQuery, rejectBody, reviseBody } from './routes/plans.js';
import { answerBody, questionListQuery } from './routes/questions.js';
import { toolApprovalListQuery, toolDecisionBody } from './routes/tool-approvals.js';
import { createTriggerSchema, fireSchema, patchTriggerSchema } from './routes/triggers.js';
import { createJobSchema, createSessionSchema, listRunsQuery, listSessionsQuery } from './schemas.js';

interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  /** Who may call it: a role permission, a trigger token, a webhook signature, or nobody (probes). */
  auth: 'none' | 'read' | 'operate' | 'decide' | 'admin' | 'trigger_token' | 'webhook_signature';
  body?: z.ZodType;
  query?: z.ZodObject;
  ok: number;
  /** The success body, where documented. */
  response?: z.ZodType;
  /** The error statuses this route answers besides 401/403 where auth applies. */
  errors?: number[];
}

const deliveriesQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).default(50) });
const eventsQuery = z.strictObject({ after: z.coerce.number().int().min(0).optional() });

/** Every route of the HTTP API. A test holds this table equal to the routes the app really serves. */
export const OPERATIONS: Operation[] = [
  { method: 'get', path: '/healthz', summary: 'Liveness', auth: 'none', ok: 200 },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: the schema is current and the scheduler runs',
    auth: 'none',
    ok: 200,
    errors: [503],
  },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', auth: 'read', ok: 200 },
  { method: 'get', path: '/openapi.json', summary: 'This document', auth: 'none', ok: 200 },
  {
    method: 'post',
    path: '/v1/sessions',
    summary: 'Create a session',
    auth: 'operate',
    body: createSessionSchema,
    ok: 201,
    errors: [400, 413, 422],
  },
  {
    method: 'get',
    path: '/v1/sessions',
    summary: 'List sessions',
    auth: 'read',
    query: listSessionsQuery,
    ok: 200,
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}',
    summary: 'Get a session',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'delete',
    path: '/v1/sessions/{id}',
    summary: 'Close a session (deletes its jobs)',
    auth: 'operate',
    ok: 200,
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/jobs',
    summary: 'Create a cron job',
    auth: 'operate',
    body: createJobSchema,
    ok: 201,
    errors: [400, 404, 409, 413, 422],
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/jobs',
    summary: "List a session's jobs",
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/jobs/{id}',
    summary: 'Get a job (nominal and jittered next fire)',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/jobs/{id}/slots',
    summary: 'What became of each slot',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'delete',
    path: '/v1/jobs/{id}',
    summary: 'Delete a job',
    auth: 'operate',
    ok: 204,
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/renew',
    summary: 'Renew a recurring job: another expiry period from now',
    auth: 'operate',
    ok: 200,
    errors: [404, 409],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/pause',
    summary: 'Pause a job',
    auth: 'operate',
    ok: 200,
    errors: [404, 409],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/resume',
    summary: 'Resume a job',
    auth: 'operate',
    ok: 200,
    errors: [404, 409],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/run',
    summary: 'Run a job now (a missed one-shot fires its slot)',
    auth: 'operate',
    ok: 201,
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/runs',
    summary: 'List runs, newest first',
    auth: 'read',
    query: listRunsQuery,
    ok: 200,
    errors: [400, 422],
  },
  { method: 'get', path: '/v1/runs/{id}', summary: 'Get a run', auth: 'read', ok: 200, errors: [404] },
  {
    method: 'post',
    path: '/v1/runs/{id}/cancel',
    summary: 'Cancel a run',
    auth: 'operate',
    ok: 200,
    errors: [404, 409],
  },
  {
    method: 'get',
    path: '/v1/runs/{id}/diff',
    summary:
      "An execute run's result as a unified diff (JSON: state, reason, branch, base_commit, commit, files with +/- counts, shown_files, truncated, diff text; at most 300 files and 1 MB of text). state: ready | no_changes | pending | not_git | unavailable (removed by retention); 409 for a planning run",
    auth: 'read',
    ok: 200,
    errors: [404, 409],
  },
  {
    method: 'get',
    path: '/v1/runs/{id}/events',
    summary: "A run's event log as Server-Sent Events (Last-Event-ID resumes)",
    auth: 'read',
    query: eventsQuery,
    ok: 200,
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/v1/questions',
    summary: 'List questions',
    auth: 'read',
    query: questionListQuery,
    ok: 200,
    errors: [422],
  },
  {
    method: 'get',
    path: '/v1/questions/{id}',
    summary: 'Get a question',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/questions/{id}/answers',
    summary: 'Answer a question',
    auth: 'decide',
    body: answerBody,
    ok: 200,
    errors: [400, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/v1/plans',
    summary: 'The plan queue, oldest first',
    auth: 'read',
    query: planListQuery,
    ok: 200,
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/plans/{id}',
    summary:
      'Get a plan with its decisions, runs and context (source, files read and searched, questions and answers, planning cost, diff against the previous round)',
    auth: 'read',
    ok: 200,
    response: planDetailSchema,
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/plans/{id}/approve',
    summary: 'Approve a plan',
    auth: 'decide',
    body: approveBody,
    ok: 200,
    errors: [400, 404, 409, 410, 422],
  },
  {
    method: 'post',
    path: '/v1/plans/{id}/reject',
    summary: 'Reject a plan (comment required)',
    auth: 'decide',
    body: rejectBody,
    ok: 200,
    errors: [400, 404, 409, 410, 422],
  },
  {
    method: 'post',
    path: '/v1/plans/{id}/revise',
    summary: 'Ask for a revised plan',
    auth: 'decide',
    body: reviseBody,
    ok: 200,
    errors: [400, 404, 409, 410, 422],
  },
  {
    method: 'post',
    path: '/v1/plans/{id}/deliver',
    summary: "Deliver an executed plan's result now (push its branch, open the pull request)",
    auth: 'decide',
    ok: 202,
    errors: [404, 409, 503],
  },
  {
    method: 'get',
    path: '/v1/tool-approvals',
    summary: 'List tool approvals',
    auth: 'read',
    query: toolApprovalListQuery,
    ok: 200,
    errors: [422],
  },
  {
    method: 'get',
    path: '/v1/tool-approvals/{id}',
    summary: 'Get a tool approval',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/tool-approvals/{id}',
    summary: 'Allow or deny a tool call',
    auth: 'decide',
    body: toolDecisionBody,
    ok: 200,
    errors: [400, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/v1/admin/auto-mode',
    summary: 'The unattended-execution switch and breaker',
    auth: 'read',
    ok: 200,
  },
  {
    method: 'post',
    path: '/v1/admin/auto-mode',
    summary: 'Switch unattended execution on or off',
    auth: 'admin',
    body: autoModeBody,
    ok: 200,
    errors: [400, 422],
  },
  {
    method: 'post',
    path: '/v1/triggers',
    summary: 'Create a trigger (a generic trigger shows its token once)',
    auth: 'operate',
    body: createTriggerSchema,
    ok: 201,
    errors: [400, 422],
  },
  { method: 'get', path: '/v1/triggers', summary: 'List triggers', auth: 'read', ok: 200 },
  {
    method: 'get',
    path: '/v1/triggers/{id}',
    summary: 'Get a trigger',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'patch',
    path: '/v1/triggers/{id}',
    summary: 'Change a trigger (rotate_token shows a new token once)',
    auth: 'operate',
    body: patchTriggerSchema,
    ok: 200,
    errors: [400, 404, 422],
  },
  {
    method: 'delete',
    path: '/v1/triggers/{id}',
    summary: 'Delete a trigger',
    auth: 'operate',
    ok: 204,
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/triggers/{id}/deliveries',
    summary: "A trigger's recent deliveries and their outcomes",
    auth: 'read',
    query: deliveriesQuery,
    ok: 200,
    errors: [404, 422],
  },
  {
    method: 'post',
    path: '/v1/triggers/{id}/fire',
    summary: 'Fire a generic trigger with its token',
    auth: 'trigger_token',
    body: fireSchema,
    ok: 201,
    errors: [400, 409, 413, 422, 429],
  },
  {
    method: 'get',
    path: '/v1/deliveries',
    summary: 'Webhook deliveries and fires, newest first (queued ones wait for the inbox)',
    auth: 'read',
    query: deliveryListQuery,
    ok: 200,
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/deliveries/{id}',
    summary: 'One delivery: its outcome, detail and runs once processed',
    auth: 'read',
    ok: 200,
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/notifications',
    summary: 'Outbound notifications, newest first: status, attempts, last error, next attempt',
    auth: 'decide',
    query: notificationListQuery,
    ok: 200,
    errors: [400, 422],
  },
  {
    method: 'post',
    path: '/webhooks/github',
    summary: 'GitHub webhook (X-Hub-Signature-256): recorded, answered, then processed by the inbox',
    auth: 'webhook_signature',
    ok: 202,
    // 503 (with Retry-After): the budget of unverified webhook bytes is full.
    errors: [400, 413, 503],
  },
];

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

const jsonSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });

/** The OpenAPI 3.1 document, generated from the zod schemas that validate each route. */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const params: unknown[] = [];
    for (const m of op.path.matchAll(/\{(\w+)\}/g)) {
      params.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    if (op.query) {
      const schema = jsonSchema(op.query) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        params.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: prop });
      }
    }
    const responses: Record<string, unknown> = {
      [op.ok]: {
        description: op.ok === 204 ? 'No content' : 'Success',
        ...(op.response ? { content: { 'application/json': { schema: jsonSchema(op.response) } } } : {}),
      },
    };
    const errors = new Set(op.errors ?? []);
    if (op.auth !== 'none') errors.add(401);
    if (['operate', 'decide', 'admin'].includes(op.auth)) errors.add(403);
    for (const status of [...errors].sort()) {
      responses[status] = {
        description: 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      summary: op.summary,
      ...(params.length ? { parameters: params } : {}),
      ...(op.body
        ? {
            requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.body) } } },
          }
        : {}),
      responses,
      security: op.auth === 'none' || op.auth === 'webhook_signature' ? [] : [{ bearer: [] }],
      'x-drydock-auth': op.auth,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'drydock',
      version,
      description: 'Plan-mode AI agent runs that wait for a human approval.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: errorSchema },
    },
    paths,
  };
}
