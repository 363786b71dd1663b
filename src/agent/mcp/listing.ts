import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MCP_TOOL_NAME, type McpServerConfig, mcpToolName } from '../../config/schema.js';
import type { ToolDefinition } from '../tools/types.js';
import { planOffered } from './policy.js';
import type { McpAnnotations, McpToolInfo, McpToolLeftOut } from './types.js';

// A server's tools, listed once when it starts: every page of `tools/list` (MCP spec, "Tools", Listing tools:
// the result's `nextCursor` asks for the next page, until it is absent), each turned into the tool the model
// sees as mcp__<server>__<tool>. A tool whose full name the Messages API would refuse (^[a-zA-Z0-9_-]{1,128}$)
// is left out, as Claude Code leaves out a tool whose name is too long, and listed as such. So is a tool with
// an input property the API refuses: it answers 400 "tools.N.custom.input_schema.properties: Property keys
// should match pattern '^[a-zA-Z0-9_.-]{1,64}$'" for the whole request (an error quoted from the live API in
// an MCP server's docs, glama.ai azure-devops-mcp TOOL-NAME-VALIDATION.md), which would fail every turn.

/** Pages read at most; a server whose cursor never ends is cut off here. */
const MAX_PAGES = 100;

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** The annotations a server sent, of the types the spec gives them; anything else is dropped. */
function annotationsOf(tool: Record<string, unknown>): McpAnnotations {
  const raw = (
    typeof tool.annotations === 'object' && tool.annotations !== null ? tool.annotations : {}
  ) as Record<string, unknown>;
  const out: McpAnnotations = {};
  const title = typeof tool.title === 'string' ? tool.title : raw.title;
  if (typeof title === 'string') out.title = title;
  for (const hint of HINTS) if (typeof raw[hint] === 'boolean') out[hint] = raw[hint] as boolean;
  return out;
}

function inputSchemaOf(tool: Record<string, unknown>): ToolDefinition['input_schema'] {
  const schema = tool.inputSchema;
  if (typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object') {
    const s = schema as ToolDefinition['input_schema'];
    return { ...s, properties: s.properties ?? {} };
  }
  return { type: 'object', properties: {} };
}

const PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

/** The first top-level input property whose name the Messages API refuses, or null. */
function refusedPropertyKey(schema: ToolDefinition['input_schema']): string | null {
  return Object.keys(schema.properties).find((key) => !PROPERTY_KEY.test(key)) ?? null;
}

export interface ServerTools {
  tools: McpToolInfo[];
  leftOut: McpToolLeftOut[];
}

/** Every tool of one server, all pages, as the model will see them. */
export async function listServerTools(
  client: Client,
  server: string,
  config: McpServerConfig,
  signal: AbortSignal,
): Promise<ServerTools> {
  const tools: McpToolInfo[] = [];
  const leftOut: McpToolLeftOut[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
      signal,
      timeout: 2 ** 31 - 1,
    });
    for (const raw of result.tools as unknown as Record<string, unknown>[]) {
      const tool = String(raw.name);
      const name = mcpToolName(server, tool);
      if (seen.has(tool)) {
        leftOut.push({ server, tool, reason: 'listed twice by the server; the first one is offered' });
        continue;
      }
      seen.add(tool);
      if (!MCP_TOOL_NAME.test(name)) {
        leftOut.push({
          server,
          tool,
          reason: `${JSON.stringify(name).slice(0, 160)} is not a tool name the Messages API accepts (letters, digits, _ and -, at most 128)`,
        });
        continue;
      }
      const input_schema = inputSchemaOf(raw);
      const badKey = refusedPropertyKey(input_schema);
      if (badKey !== null) {
        leftOut.push({
          server,
          tool,
          reason: `its input property ${JSON.stringify(badKey).slice(0, 80)} is not a name the Messages API accepts (letters, digits, _ . and -, at most 64)`,
        });
        continue;
      }
      const annotations = annotationsOf(raw);
      const description = typeof raw.description === 'string' ? raw.description : (annotations.title ?? '');
      tools.push({
        name,
        server,
        tool,
        definition: { name, description, input_schema },
        annotations,
        plan: planOffered(config, tool, annotations),
      });
    }
    cursor =
      typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
    if (cursor === undefined) return { tools, leftOut };
  }
  throw new Error(`tools/list went on for more than ${MAX_PAGES} pages`);
}
