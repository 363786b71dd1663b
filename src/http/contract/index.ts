import type { z } from 'zod';
import { autoModeBody, autoModeSchema } from './admin.js';
import { errorSchema } from './common.js';
import { webhookDeliveryListQuery, webhookDeliveryListSchema, webhookDeliverySchema } from './deliveries.js';
import { runEventSchema } from './events.js';
import {
  backfillResultSchema,
  backfillSchema,
  createJobSchema,
  jobListSchema,
  jobPageSchema,
  jobSchema,
  listJobsQuery,
  patchJobSchema,
  slotListSchema,
} from './jobs.js';
import { notificationListQuery, notificationListSchema } from './notifications.js';
import {
  healthSchema,
  jsonSchemaSchema,
  metricsSchema,
  openApiSchema,
  readySchema,
  webhookAnswerSchema,
} from './ops.js';
import {
  approveBody,
  decideResultSchema,
  planDetailSchema,
  planListQuery,
  planListSchema,
  planSchema,
  rejectBody,
  reviseBody,
} from './plans.js';
import { answerBody, questionListQuery, questionListSchema, questionSchema } from './questions.js';
import {
  diffSchema,
  eventsQuery,
  listRunsQuery,
  resumedRunsSchema,
  runDetailSchema,
  runListSchema,
  runSchema,
} from './runs.js';
import {
  closedSessionSchema,
  createSessionSchema,
  listSessionsQuery,
  sessionListSchema,
  sessionSchema,
} from './sessions.js';
import {
  toolApprovalListQuery,
  toolApprovalListSchema,
  toolApprovalSchema,
  toolDecisionBody,
} from './tool-approvals.js';
import {
  createTriggerSchema,
  fireResultSchema,
  fireSchema,
  patchTriggerSchema,
  triggerDeliveriesQuery,
  triggerDeliveryListSchema,
  triggerListSchema,
  triggerSchema,
  triggerWithTokenSchema,
} from './triggers.js';
import { usageQuery, usageSchema } from './usage.js';

// The HTTP API's contract: every route with who may call it, what it takes and what it answers. Routes
// validate their input with these schemas, the OpenAPI document (src/http/openapi.ts) is generated from this
// table, the CLI types its answers with them, and tests hold the served answers to them
// (tests/http/contract.test.ts) and this table equal to the routes the app serves (tests/http/openapi.test.ts).
// This folder imports only zod and src/domain/.

export * from './admin.js';
export * from './apply.js';
export * from './common.js';
export * from './deliveries.js';
export * from './events.js';
export * from './jobs.js';
export * from './notifications.js';
export * from './ops.js';
export * from './plans.js';
export * from './questions.js';
export * from './runs.js';
export * from './sessions.js';
export * from './tool-approvals.js';
export * from './triggers.js';
export * from './usage.js';

/** Who may call a route: a role permission, a trigger token, a webhook signature, or nobody (probes). */
export type RouteAuth =
  | 'none'
  | 'read'
  | 'operate'
  | 'decide'
  | 'admin'
  | 'trigger_token'
  | 'webhook_signature';

/** One answer of a route: its body's schema (null: no body) and media type. */
export interface RouteResponse {
  description: string;
  contentType: 'application/json' | 'text/event-stream' | 'text/plain' | null;
  /** JSON: the body; an event stream: each event's data; text: the text. */
  schema: z.ZodType | null;
}

export interface Route {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI style: `/v1/plans/{id}`. Every `{name}` is a string path parameter. */
  path: string;
  summary: string;
  auth: RouteAuth;
  request?: { query?: z.ZodObject; body?: z.ZodType };
  /** The success answers by status. */
  responses: Record<number, RouteResponse>;
  /** The error statuses this route answers besides 401/403 where auth applies; their body is ERROR_BODY. */
  errors?: number[];
}

/** A decision on a plan: the three share their path, answer and refusals. */
const decideRoute = (verb: string, summary: string, body: z.ZodType): Route => ({
  method: 'post',
  path: `/v1/plans/{id}/${verb}`,
  summary,
  auth: 'decide',
  request: { body },
  responses: { 200: json(decideResultSchema) },
  errors: [400, 404, 409, 410, 422],
});

const json = (schema: z.ZodType, description = 'Success'): RouteResponse => ({
  description,
  contentType: 'application/json',
  schema,
});
const text = (schema: z.ZodType): RouteResponse => ({
  description: 'Success',
  contentType: 'text/plain',
  schema,
});
const eventStream = (schema: z.ZodType): RouteResponse => ({
  description: 'Server-Sent Events; `id:` is the sequence number, `event:` the type, `data:` this JSON',
  contentType: 'text/event-stream',
  schema,
});
const NO_CONTENT: RouteResponse = { description: 'No content', contentType: null, schema: null };

/** The body of every error answer. */
export const ERROR_BODY = errorSchema;

/**
 * The statuses a route answers with an error body: its own, 401/403 where a token or role is checked, and 503
 * wherever the database is read (all but /healthz) when it cannot be reached.
 */
export function errorStatuses(route: Route): number[] {
  const errors = new Set(route.errors ?? []);
  if (route.path !== '/healthz' && !route.responses[503]) errors.add(503);
  if (route.auth !== 'none') errors.add(401);
  if (['operate', 'decide', 'admin'].includes(route.auth)) errors.add(403);
  return [...errors].sort((a, b) => a - b);
}

/** Every route of the HTTP API (the /ui pages aside). */
export const ROUTES: Route[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness',
    auth: 'none',
    responses: { 200: json(healthSchema) },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: the schema is current and the scheduler runs',
    auth: 'none',
    responses: { 200: json(readySchema, 'Ready'), 503: json(readySchema, 'Not ready') },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    auth: 'read',
    responses: { 200: text(metricsSchema) },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    auth: 'none',
    responses: { 200: json(openApiSchema) },
  },
  {
    method: 'get',
    path: '/v1/schema/apply',
    summary: "The JSON Schema of `drydock apply`'s file (drydock.yaml), for editors",
    auth: 'none',
    responses: { 200: json(jsonSchemaSchema) },
  },
  {
    method: 'post',
    path: '/v1/sessions',
    summary: 'Create a session',
    auth: 'operate',
    request: { body: createSessionSchema },
    responses: { 201: json(sessionSchema, 'Created') },
    errors: [400, 413, 422],
  },
  {
    method: 'get',
    path: '/v1/sessions',
    summary: 'List sessions',
    auth: 'read',
    request: { query: listSessionsQuery },
    responses: { 200: json(sessionListSchema) },
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}',
    summary: 'Get a session',
    auth: 'read',
    responses: { 200: json(sessionSchema) },
    errors: [404],
  },
  {
    method: 'delete',
    path: '/v1/sessions/{id}',
    summary: 'Close a session (deletes its jobs)',
    auth: 'operate',
    responses: { 200: json(closedSessionSchema) },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/jobs',
    summary:
      'Create a cron job (403 forbidden when its options allow more execute_mode, network or allow_self_approval than its session, unless by an admin; 409 when the session has a job of its name)',
    auth: 'operate',
    request: { body: createJobSchema },
    responses: { 201: json(jobSchema, 'Created') },
    errors: [400, 404, 409, 413, 422],
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/jobs',
    summary: "List a session's jobs",
    auth: 'read',
    responses: { 200: json(jobListSchema) },
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/jobs',
    summary:
      "List jobs across sessions (scheduled triggers' jobs too), oldest first; filter by session, trigger, enabled, expiring_before",
    auth: 'read',
    request: { query: listJobsQuery },
    responses: { 200: json(jobPageSchema) },
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/jobs/{id}',
    summary: 'Get a job (nominal and jittered next fire)',
    auth: 'read',
    responses: { 200: json(jobSchema) },
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/jobs/{id}/slots',
    summary: 'What became of each slot',
    auth: 'read',
    responses: { 200: json(slotListSchema) },
    errors: [404],
  },
  {
    method: 'patch',
    path: '/v1/jobs/{id}',
    summary:
      "Change a session's job (planned anew from now; 409 managed_by_trigger for a schedule trigger's job, 403 as at creation)",
    auth: 'operate',
    request: { body: patchJobSchema },
    responses: { 200: json(jobSchema) },
    errors: [400, 404, 409, 413, 422],
  },
  {
    method: 'delete',
    path: '/v1/jobs/{id}',
    summary: 'Delete a job',
    auth: 'operate',
    responses: { 204: NO_CONTENT },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/renew',
    summary: 'Renew a recurring job: another expiry period from now',
    auth: 'operate',
    responses: { 200: json(jobSchema) },
    errors: [404, 409],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/pause',
    summary: 'Pause a job',
    auth: 'operate',
    responses: { 200: json(jobSchema) },
    errors: [404, 409],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/resume',
    summary: 'Resume a job',
    auth: 'operate',
    responses: { 200: json(jobSchema) },
    errors: [404, 409],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/run',
    summary: 'Run a job now (a missed one-shot fires its slot); 429 spend_cap past a spend cap',
    auth: 'operate',
    responses: { 201: json(runSchema, 'The run it started') },
    errors: [404, 429],
  },
  {
    method: 'post',
    path: '/v1/jobs/{id}/backfill',
    summary:
      "Fire the slots of a past range [from, to) once each, under the job's overlap policy (at most scheduler.max_backfill_slots)",
    auth: 'operate',
    request: { body: backfillSchema },
    responses: { 200: json(backfillResultSchema, 'What each slot of the range became') },
    errors: [400, 404, 422],
  },
  {
    method: 'get',
    path: '/v1/runs',
    summary: 'List runs, newest first',
    auth: 'read',
    request: { query: listRunsQuery },
    responses: { 200: json(runListSchema) },
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/runs/{id}',
    summary: 'Get a run',
    auth: 'read',
    responses: { 200: json(runDetailSchema) },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/runs/resume',
    summary:
      "Resume every run waiting on the account's spend limit (once it was raised): each goes on from its stored conversation",
    auth: 'admin',
    responses: { 200: json(resumedRunsSchema) },
    errors: [],
  },
  {
    method: 'post',
    path: '/v1/runs/{id}/cancel',
    summary: 'Cancel a run',
    auth: 'operate',
    responses: { 200: json(runSchema) },
    errors: [404, 409],
  },
  {
    method: 'get',
    path: '/v1/runs/{id}/diff',
    summary:
      "An execute run's result as a unified diff (JSON: state, reason, branch, base_commit, commit, files with +/- counts, shown_files, truncated, diff text; at most 300 files and 1 MB of text). state: ready | no_changes | pending | not_git | unavailable (removed by retention); 409 for a planning run",
    auth: 'read',
    responses: { 200: json(diffSchema) },
    errors: [404, 409],
  },
  {
    method: 'get',
    path: '/v1/runs/{id}/events',
    summary: "A run's event log as Server-Sent Events (Last-Event-ID resumes)",
    auth: 'read',
    request: { query: eventsQuery },
    responses: { 200: eventStream(runEventSchema) },
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/v1/questions',
    summary: 'List questions',
    auth: 'read',
    request: { query: questionListQuery },
    responses: { 200: json(questionListSchema) },
    errors: [422],
  },
  {
    method: 'get',
    path: '/v1/questions/{id}',
    summary: 'Get a question',
    auth: 'read',
    responses: { 200: json(questionSchema) },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/questions/{id}/answers',
    summary: 'Answer a question',
    auth: 'decide',
    request: { body: answerBody },
    responses: { 200: json(questionSchema) },
    errors: [400, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/v1/plans',
    summary: 'The plan queue, oldest first (order=newest: newest first)',
    auth: 'read',
    request: { query: planListQuery },
    responses: { 200: json(planListSchema) },
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/plans/{id}',
    summary:
      'Get a plan with its decisions, runs and context (source, files read and searched, questions and answers, planning cost, diff against the previous round)',
    auth: 'read',
    responses: { 200: json(planDetailSchema) },
    errors: [404],
  },
  decideRoute('approve', 'Approve a plan', approveBody),
  decideRoute('reject', 'Reject a plan (comment required)', rejectBody),
  decideRoute('revise', 'Ask for a revised plan', reviseBody),
  {
    method: 'post',
    path: '/v1/plans/{id}/deliver',
    summary: "Deliver an executed plan's result now (push its branch, open the pull request)",
    auth: 'decide',
    responses: { 202: json(planSchema, 'Delivery requested') },
    errors: [404, 409, 503],
  },
  {
    method: 'get',
    path: '/v1/tool-approvals',
    summary: 'List tool approvals',
    auth: 'read',
    request: { query: toolApprovalListQuery },
    responses: { 200: json(toolApprovalListSchema) },
    errors: [422],
  },
  {
    method: 'get',
    path: '/v1/tool-approvals/{id}',
    summary: 'Get a tool approval',
    auth: 'read',
    responses: { 200: json(toolApprovalSchema) },
    errors: [404],
  },
  {
    method: 'post',
    path: '/v1/tool-approvals/{id}',
    summary: 'Allow or deny a tool call',
    auth: 'decide',
    request: { body: toolDecisionBody },
    responses: { 200: json(toolApprovalSchema) },
    errors: [400, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/v1/admin/auto-mode',
    summary: 'The unattended-execution switch and breaker',
    auth: 'read',
    responses: { 200: json(autoModeSchema) },
  },
  {
    method: 'post',
    path: '/v1/admin/auto-mode',
    summary: 'Switch unattended execution on or off',
    auth: 'admin',
    request: { body: autoModeBody },
    responses: { 200: json(autoModeSchema) },
    errors: [400, 422],
  },
  {
    method: 'post',
    path: '/v1/triggers',
    summary: 'Create a trigger (a generic trigger shows its token once)',
    auth: 'operate',
    request: { body: createTriggerSchema },
    responses: { 201: json(triggerWithTokenSchema, 'Created') },
    errors: [400, 409, 422],
  },
  {
    method: 'get',
    path: '/v1/triggers',
    summary: 'List triggers',
    auth: 'read',
    responses: { 200: json(triggerListSchema) },
  },
  {
    method: 'get',
    path: '/v1/triggers/{id}',
    summary: 'Get a trigger',
    auth: 'read',
    responses: { 200: json(triggerSchema) },
    errors: [404],
  },
  {
    method: 'patch',
    path: '/v1/triggers/{id}',
    summary:
      'Change a trigger (rotate_token shows a new token once; 403 forbidden when new options raise execute_mode, network or allow_self_approval, unless by an admin)',
    auth: 'operate',
    request: { body: patchTriggerSchema },
    responses: { 200: json(triggerWithTokenSchema) },
    errors: [400, 404, 409, 422],
  },
  {
    method: 'delete',
    path: '/v1/triggers/{id}',
    summary: 'Delete a trigger',
    auth: 'operate',
    responses: { 204: NO_CONTENT },
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/triggers/{id}/deliveries',
    summary: "A trigger's recent webhook deliveries and their outcomes",
    auth: 'read',
    request: { query: triggerDeliveriesQuery },
    responses: { 200: json(triggerDeliveryListSchema) },
    errors: [404, 422],
  },
  {
    method: 'post',
    path: '/v1/triggers/{id}/fire',
    summary: 'Fire a generic trigger with its token',
    auth: 'trigger_token',
    request: { body: fireSchema },
    responses: {
      201: json(fireResultSchema, 'The run it started'),
      200: json(fireResultSchema, 'A repeated idempotency key: the first fire'),
    },
    errors: [400, 409, 413, 422, 429],
  },
  {
    method: 'get',
    path: '/v1/deliveries',
    summary: 'Webhook deliveries and fires, newest first (queued ones wait for the inbox)',
    auth: 'read',
    request: { query: webhookDeliveryListQuery },
    responses: { 200: json(webhookDeliveryListSchema) },
    errors: [400, 422],
  },
  {
    method: 'get',
    path: '/v1/deliveries/{id}',
    summary: 'One webhook delivery: its outcome, detail and runs once processed',
    auth: 'read',
    responses: { 200: json(webhookDeliverySchema) },
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/usage',
    summary:
      'Where money went: runs and their receipts per day of limits.timezone, by trigger, session or model',
    auth: 'read',
    request: { query: usageQuery },
    responses: { 200: json(usageSchema) },
    errors: [422],
  },
  {
    method: 'get',
    path: '/v1/notifications',
    summary: 'Outbound notifications, newest first: status, attempts, last error, next attempt',
    auth: 'decide',
    request: { query: notificationListQuery },
    responses: { 200: json(notificationListSchema) },
    errors: [400, 422],
  },
  {
    method: 'post',
    path: '/webhooks/github',
    summary: 'GitHub webhook (X-Hub-Signature-256): recorded, answered, then processed by the inbox',
    auth: 'webhook_signature',
    responses: {
      202: json(webhookAnswerSchema, 'Recorded'),
      200: json(webhookAnswerSchema, 'A ping, or a delivery seen before'),
    },
    // 415: a correctly signed form-encoded body (the webhook's Content type is not application/json on GitHub).
    // 503 (with Retry-After): the budget of unverified webhook bytes is full.
    errors: [400, 413, 415, 503],
  },
];
