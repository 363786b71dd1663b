import { z } from 'zod';
import { cursor, limit, limitsSchema, pageOf, runDefaults, runDefaultsSchema, time } from './common.js';

// /v1/sessions: a workspace and the defaults its runs take.

export const createSessionSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  workspace: z.string().min(1).max(4096),
  defaults: runDefaultsSchema.optional(),
  limits: limitsSchema.optional(),
});

export const listSessionsQuery = z.strictObject({
  status: z.enum(['open', 'closed']).optional(),
  limit,
  cursor,
});

export const sessionSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  workspace: z.string(),
  owner: z.string(),
  status: z.enum(['open', 'closed']),
  defaults: runDefaults,
  limits: limitsSchema,
  created_at: time,
  closed_at: time.nullable(),
  made_by_trigger: z
    .boolean()
    .describe(
      "a session a trigger made (a schedule trigger's, or one per pull request): it is the trigger's, and `drydock apply` and `drydock export` leave it alone",
    ),
});
export type SessionJson = z.infer<typeof sessionSchema>;

export const sessionListSchema = pageOf(sessionSchema);

/** DELETE /v1/sessions/:id: the closed session and how many jobs went with it. */
export const closedSessionSchema = sessionSchema.extend({ deleted_jobs: z.number() });
