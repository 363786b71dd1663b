import { z } from 'zod';
import { createJobSchema, jobName } from './jobs.js';
import { createSessionSchema } from './sessions.js';
import { createTriggerSchema } from './triggers.js';

// The file `drydock apply` reads and `drydock export` writes (drydock.yaml): sessions with their jobs, and
// triggers, each keyed by its name. Every object is the request that creates it (the create schemas of this
// folder), with its name required: a field added to a create schema is a field of the file too. Its JSON
// Schema is published (schemas/drydock.schema.json, GET /v1/schema/apply) so that editors check the file.

export const APPLY_API_VERSION = 'drydock/v1';

/** A session's job in the file: POST /v1/sessions/:id/jobs with its name required. */
export const fileJobSchema = createJobSchema.extend({
  name: jobName,
  // No default here: a job the file leaves `recurring` out of keeps what it is (the daemon's default, true,
  // applies when the job is made).
  recurring: z.boolean().optional(),
});

/** A session in the file: POST /v1/sessions with its name required, and its jobs. */
export const fileSessionSchema = createSessionSchema.extend({
  name: createSessionSchema.shape.name.unwrap(),
  jobs: z
    .array(fileJobSchema)
    .optional()
    .describe('the named jobs of the session; with --prune, a named job left out is deleted'),
});

/** A trigger in the file: POST /v1/triggers as it is (its name is required there already). */
export const fileTriggerSchema = createTriggerSchema;

export const applyDocumentSchema = z
  .strictObject({
    $schema: z.string().optional().describe('the JSON Schema of this file, for editors; ignored by drydock'),
    apiVersion: z.literal(APPLY_API_VERSION),
    sessions: z.array(fileSessionSchema).optional(),
    triggers: z.array(fileTriggerSchema).optional(),
  })
  .meta({
    title: 'drydock apply file',
    description:
      'Sessions, their jobs and triggers, keyed by name, for `drydock apply -f FILE` (and written by `drydock export`).',
  });

export type ApplyDocument = z.infer<typeof applyDocumentSchema>;
export type FileSession = z.infer<typeof fileSessionSchema>;
export type FileJob = z.infer<typeof fileJobSchema>;
export type FileTrigger = z.infer<typeof fileTriggerSchema>;

/** The document's JSON Schema (draft 2020-12), as the input the file may hold. */
export function applyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(applyDocumentSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
}
