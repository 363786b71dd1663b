import { z } from 'zod';
import { WEBHOOK_OUTCOMES } from '../../domain/types.js';

// The probes, this document, and the GitHub webhook's answer.

export const healthSchema = z.strictObject({ status: z.literal('ok') });

export const readySchema = z.strictObject({
  status: z.enum(['ready', 'not_ready']),
  checks: z.strictObject({ store: z.boolean(), scheduler: z.boolean() }),
  sandbox: z
    .enum(['bwrap', 'off', 'unavailable'])
    .optional()
    .describe("where the execute phase's commands run (absent when the daemon has no sandbox)"),
  model: z.strictObject({ id: z.string(), configured: z.boolean() }),
  replica: z
    .string()
    .optional()
    .describe('the name of the replica that answered (replica_id, or the one kept in data_dir)'),
  warnings: z
    .array(z.string())
    .optional()
    .describe(
      'what needs a person but leaves the daemon ready (a default model that retires within 30 days)',
    ),
});
export type ReadyJson = z.infer<typeof readySchema>;

/** GET /openapi.json: an OpenAPI 3.1 document (this contract, as JSON Schema). */
export const openApiSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/** GET /metrics: the Prometheus text format. */
export const metricsSchema = z.string();

const settled = {
  delivery_id: z.string(),
  outcome: z.enum(WEBHOOK_OUTCOMES),
  detail: z.string().nullable(),
  run_ids: z.array(z.string()),
};

/**
 * POST /webhooks/github: 202 once recorded (the inbox processes it: GET /v1/deliveries/:id); 200 for a ping,
 * and for a delivery seen before (with what became of it).
 */
export const webhookAnswerSchema = z.union([
  z.strictObject({ pong: z.literal(true), delivery_id: z.string(), duplicate: z.literal(true).optional() }),
  z.strictObject({ ...settled, duplicate: z.literal(true).optional() }),
]);

/** GET /v1/schema/apply: a JSON Schema (draft 2020-12) of `drydock apply`'s file. */
export const jsonSchemaSchema = z.looseObject({ $schema: z.string() });
