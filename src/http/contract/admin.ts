import { z } from 'zod';

// /v1/admin: the unattended-execution switch.

export const autoModeBody = z.strictObject({ enabled: z.boolean() });

/** The switch for unattended execution (`edits` and `auto` modes), and the breaker's view. */
export const autoModeSchema = z.strictObject({
  enabled: z.boolean(),
  breaker: z.strictObject({
    closed: z.boolean(),
    reason: z.string().nullable(),
    recent_executions: z.number(),
    recent_failures: z.number(),
  }),
});
export type AutoModeJson = z.infer<typeof autoModeSchema>;
