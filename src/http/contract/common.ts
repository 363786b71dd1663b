import { z } from 'zod';
import { MAX_MCP_SERVERS } from '../../domain/mcp-selection.js';
import { domainsProblem } from '../../domain/network.js';
import { fromLegacyThinking, thinkingOptionSchema } from '../../domain/thinking.js';
import { EFFORTS, EXECUTE_MODES, SHOWN_RUN_SOURCES } from '../../domain/types.js';

// Pieces every part of the contract shares: times, pages, usage, run options and the error body.

/** A time as the API writes it: ISO-8601 in UTC with milliseconds (`2026-01-31T09:00:00.000Z`). */
export const time = z.iso.datetime();

export const runSourceSchema = z
  .enum(SHOWN_RUN_SOURCES)
  .describe('schedule, manual, or webhook (a webhook delivery or a trigger fire; was `delivery`)');

export const limit = z.coerce.number().int().min(1).max(200).default(50);
export const cursor = z.string().max(500).optional();

/** A list with the cursor of the next page (null on the last). */
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.strictObject({ items: z.array(item), next_cursor: z.string().nullable() });

/** A whole list in one answer. */
export const listOf = <T extends z.ZodType>(item: T) => z.strictObject({ items: z.array(item) });

/** Tokens by kind, summed over a run's turns (a kind never used is absent). */
export const usage = z.strictObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_write_5m_tokens: z.number().optional(),
  cache_write_1h_tokens: z.number().optional(),
  cache_read_tokens: z.number().optional(),
});

/** The shape before thinking became off | adaptive | {budget_tokens}: still accepted. */
const legacyThinking = z.strictObject({
  enabled: z.boolean(),
  budget_tokens: z.int().min(1024).max(128_000).optional(),
});

/**
 * `network`: the host names the execute phase's commands may reach through drydock's egress proxy, e.g.
 * ["registry.npmjs.org", "*.github.com"] (`*.` any name below); false or [] for none. `true` is deprecated: the
 * configured default list (execute.network_default_domains). An entry that is no host name (an IP address, a
 * port, a URL) is refused with 422 naming it.
 */
const networkSchema = z.union([
  z.boolean().meta({
    deprecated: true,
    description: 'false: no network; true (deprecated): the configured execute.network_default_domains',
  }),
  z
    .array(z.string(), { error: 'network must be true, false or a list of host names' })
    .superRefine((list, ctx) => {
      const problem = domainsProblem(list);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(
      'host names the commands may reach: "registry.npmjs.org", or "*.github.com" for any name below',
    ),
]);

/** Run options as a request gives them: a session's defaults, a job's or a trigger's overrides. */
export const runDefaultsSchema = z.strictObject({
  model: z.string().min(1).max(200).optional(),
  thinking: z.union([thinkingOptionSchema, legacyThinking.transform(fromLegacyThinking)]).optional(),
  effort: z.enum(EFFORTS).optional(),
  budget_usd: z.number().positive().max(10_000).optional(),
  max_turns: z.int().min(1).max(500).optional(),
  approvals_required: z.int().min(1).max(10).optional(),
  allow_self_approval: z.boolean().optional(),
  execute_mode: z.enum(EXECUTE_MODES).optional(),
  network: networkSchema.optional(),
  deliver: z.boolean().optional(),
  mcp: z
    .array(z.string().min(1).max(120))
    .max(MAX_MCP_SERVERS)
    .optional()
    .describe(
      "names of MCP servers under the configuration's mcp.servers whose tools the runs get; a job's or trigger's list replaces its session's; [] for none (default: none)",
    ),
});

/** Run options as the API shows them (what was stored; options stored before the new thinking shape keep theirs). */
export const runDefaults = z.strictObject({
  model: z.string().optional(),
  thinking: z.union([thinkingOptionSchema, legacyThinking]).optional(),
  effort: z.enum(EFFORTS).optional(),
  budget_usd: z.number().optional(),
  max_turns: z.number().optional(),
  approvals_required: z.number().optional(),
  allow_self_approval: z.boolean().optional(),
  execute_mode: z.enum(EXECUTE_MODES).optional(),
  network: z.union([z.boolean(), z.array(z.string())]).optional(),
  deliver: z.boolean().optional(),
  mcp: z.array(z.string()).optional(),
});

export type RunDefaultsJson = z.infer<typeof runDefaults>;

/** Every error answer: a stable code, a message safe to show, and for invalid input what was wrong where. */
export const errorSchema = z.strictObject({
  error: z.strictObject({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});

/**
 * A trigger's or session's spend caps (docs/spend-caps.md), per day of `limits.timezone`: US dollars of
 * receipts and runs started. An absent key is no cap; `{}` removes them.
 */
export const limitsSchema = z
  .strictObject({
    daily_usd: z.number().gt(0).max(1_000_000).optional(),
    daily_runs: z.int().min(1).max(1_000_000).optional(),
  })
  .describe('spend caps per day of limits.timezone; an absent key is no cap');
