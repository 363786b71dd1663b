import { z } from 'zod';
import { limit, listOf, time } from './common.js';

// /v1/tool-approvals: an execute run's Write, Edit, Bash or MCP call waiting for a person to allow it.

export const TOOL_APPROVAL_STATUSES = ['pending', 'allowed', 'denied', 'timed_out', 'canceled'] as const;

export const toolApprovalListQuery = z.strictObject({
  status: z.enum(TOOL_APPROVAL_STATUSES).optional(),
  run_id: z.string().max(100).optional(),
  limit,
});

export const toolDecisionBody = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  message: z.string().max(10_000).optional(),
});

export const toolApprovalSchema = z.strictObject({
  id: z.string(),
  run_id: z.string(),
  session_id: z.string(),
  plan_id: z.string().nullable(),
  tool_use_id: z.string(),
  tool: z.string(),
  input: z.unknown().describe("the call's input as the model gave it"),
  mcp: z
    .strictObject({ server: z.string(), tool: z.string() })
    .nullable()
    .describe(
      'an MCP call (tool mcp__<server>__<tool>): its server and its tool on that server; null otherwise',
    ),
  status: z.enum(TOOL_APPROVAL_STATUSES),
  message: z.string().nullable(),
  decided_by: z.string().nullable(),
  created_at: time,
  expires_at: time,
  decided_at: time.nullable(),
});
export type ToolApprovalJson = z.infer<typeof toolApprovalSchema>;

export const toolApprovalListSchema = listOf(toolApprovalSchema);
