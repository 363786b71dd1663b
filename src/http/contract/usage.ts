import { z } from 'zod';
import { USAGE_KEYS } from '../../domain/spend.js';

// /v1/usage: where money went, from the runs' receipts, per day of limits.timezone (docs/spend-caps.md).

const date = z.iso.date();

export const usageQuery = z.strictObject({
  by: z.enum(USAGE_KEYS).default('session'),
  from: date.optional().describe('first day (YYYY-MM-DD, included); default: 29 days before `to`'),
  to: date.optional().describe('last day (YYYY-MM-DD, included); default: today in limits.timezone'),
});

const totals = {
  runs: z.number(),
  cost_usd: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
};

export const usageSchema = z.strictObject({
  by: z.enum(USAGE_KEYS),
  timezone: z.string().describe('limits.timezone: the zone whose days the figures are counted by'),
  from: z.string(),
  to: z.string(),
  rows: z
    .array(
      z.strictObject({
        day: z.string(),
        key: z.string().nullable().describe('the trigger, session or model; null: runs without one'),
        name: z
          .string()
          .nullable()
          .describe("the trigger's or session's name (null for a model, or one gone)"),
        ...totals,
      }),
    )
    .describe('per day and key, days in order'),
  days: z.array(z.strictObject({ day: z.string(), ...totals })).describe('every day of the range'),
  totals: z.strictObject(totals),
});
export type UsageJson = z.infer<typeof usageSchema>;
