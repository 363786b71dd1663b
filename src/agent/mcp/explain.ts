import type { McpServerConfig } from '../../config/schema.js';
import { EXECUTE_MODES } from '../../domain/types.js';
import { executeRule, planReason } from './policy.js';
import type { ExecuteMode, McpAnnotations, McpToolInfo } from './types.js';

// What `drydock mcp tools <server>` says of each tool: its hints as the server states them, and which phase
// may call it, with the reason (the configuration's lists, or a hint and whether it is trusted).

/** The spec's default of each hint, shown when the server leaves one out (MCP spec, ToolAnnotations). */
const DEFAULTS: Record<Exclude<keyof McpAnnotations, 'title'>, boolean> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

export interface ToolExplained {
  name: string;
  title: string | null;
  /** Each hint: as stated, or `(default true)` when absent. */
  hints: Record<string, string>;
  plan: { offered: boolean; why: string };
  execute: Record<ExecuteMode, { rule: 'allow' | 'ask'; why: string }>;
}

function planWhy(server: McpServerConfig, tool: McpToolInfo): string {
  switch (planReason(server, tool.tool, tool.annotations)) {
    case 'plan_tools':
      return 'named in plan_tools';
    case 'trusted_read_only':
      return 'readOnlyHint: true, and the server has trust_annotations: true';
    case 'untrusted_hint':
      return 'readOnlyHint: true, but not trusted (trust_annotations: false); name it in plan_tools to offer it';
    case 'not_read_only':
      return 'not in plan_tools, and not marked read-only';
  }
}

function executeWhy(
  server: McpServerConfig,
  tool: McpToolInfo,
  mode: ExecuteMode,
  rule: 'allow' | 'ask',
): string {
  if (mode === 'manual') return 'every call waits for a person';
  if (mode === 'auto') return rule === 'allow' ? 'named in auto_tools' : 'not in auto_tools';
  if (rule === 'allow') return 'destructiveHint: false, trusted: runs like Write';
  if (!server.trust_annotations) return 'hints not trusted (trust_annotations: false)';
  return tool.annotations.destructiveHint === false
    ? 'runs like Write'
    : 'may be destructive (destructiveHint not false)';
}

export function explainTool(
  tool: McpToolInfo,
  servers: Readonly<Record<string, McpServerConfig>>,
): ToolExplained {
  const server = servers[tool.server]!;
  const hints: Record<string, string> = {};
  for (const [hint, fallback] of Object.entries(DEFAULTS)) {
    const stated = tool.annotations[hint as keyof typeof DEFAULTS];
    hints[hint] = stated === undefined ? `(default ${fallback})` : String(stated);
  }
  const execute = Object.fromEntries(
    EXECUTE_MODES.map((mode) => {
      const rule = executeRule(tool, mode, servers);
      return [mode, { rule, why: executeWhy(server, tool, mode, rule) }];
    }),
  ) as ToolExplained['execute'];
  return {
    name: tool.name,
    title: tool.annotations.title ?? null,
    hints,
    plan: { offered: tool.plan, why: planWhy(server, tool) },
    execute,
  };
}

/** The lines `drydock mcp tools` prints for one tool. */
export function explainedLines(e: ToolExplained): string[] {
  const hints = Object.entries(e.hints)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [
    `${e.name}${e.title ? ` (${e.title})` : ''}`,
    `  hints: ${hints}`,
    `  plan: ${e.plan.offered ? 'offered' : 'not offered'}: ${e.plan.why}`,
    ...EXECUTE_MODES.map((mode) => `  execute ${mode}: ${e.execute[mode].rule}: ${e.execute[mode].why}`),
  ];
}
