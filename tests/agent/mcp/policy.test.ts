import { describe, expect, it } from 'vitest';
import { executeRule, type McpToolInfo, planOffered, planReason } from '../../../src/agent/mcp/index.js';
import { EXECUTE_MODES } from '../../../src/domain/types.js';
import { mcpConfig } from '../../support/mcp.js';

// Which phase may call an MCP tool: the configuration decides; a server's hints count only when trusted.

const servers = mcpConfig({
  trusted: { url: 'https://mcp.example.com/mcp', trust_annotations: true, auto_tools: ['deploy'] },
  untrusted: { url: 'https://other.example.com/mcp', plan_tools: ['search'], auto_tools: ['search'] },
}).mcp.servers;

function tool(server: string, name: string, annotations: McpToolInfo['annotations']): McpToolInfo {
  const full = `mcp__${server}__${name}`;
  return {
    name: full,
    server,
    tool: name,
    definition: { name: full, description: '', input_schema: { type: 'object', properties: {} } },
    annotations,
    plan: planOffered(servers[server], name, annotations),
  };
}

const cases: [McpToolInfo, Record<(typeof EXECUTE_MODES)[number], 'allow' | 'ask'>, boolean][] = [
  // a trusted server's tool that says it destroys nothing: edits runs it like Write
  [
    tool('trusted', 'comment', { destructiveHint: false }),
    { manual: 'ask', edits: 'allow', auto: 'ask' },
    false,
  ],
  // a trusted server's read-only tool: plan mode too
  [
    tool('trusted', 'read', { readOnlyHint: true, destructiveHint: false }),
    { manual: 'ask', edits: 'allow', auto: 'ask' },
    true,
  ],
  // no destructiveHint: its default is true, so edits asks
  [tool('trusted', 'deploy', {}), { manual: 'ask', edits: 'ask', auto: 'allow' }, false],
  [tool('trusted', 'drop', { destructiveHint: true }), { manual: 'ask', edits: 'ask', auto: 'ask' }, false],
  // an untrusted server's hints count for nothing
  [
    tool('untrusted', 'comment', { readOnlyHint: true, destructiveHint: false }),
    { manual: 'ask', edits: 'ask', auto: 'ask' },
    false,
  ],
  // ... but its plan_tools and auto_tools do
  [tool('untrusted', 'search', {}), { manual: 'ask', edits: 'ask', auto: 'allow' }, true],
];

describe('executeRule and the plan flag', () => {
  it.each(cases)('%# %o', (t, rules, plan) => {
    expect(t.plan).toBe(plan);
    for (const mode of EXECUTE_MODES)
      expect([mode, executeRule(t, mode, servers)]).toEqual([mode, rules[mode]]);
  });

  it('asks for a tool of a server the configuration no longer has', () => {
    const gone = { ...tool('trusted', 'deploy', {}), server: 'removed' };
    for (const mode of EXECUTE_MODES) expect(executeRule(gone, mode, servers)).toBe('ask');
  });

  it('says why a tool is or is not offered in plan mode', () => {
    expect(planReason(servers.untrusted, 'search', {})).toBe('plan_tools');
    expect(planReason(servers.trusted, 'read', { readOnlyHint: true })).toBe('trusted_read_only');
    expect(planReason(servers.untrusted, 'read', { readOnlyHint: true })).toBe('untrusted_hint');
    expect(planReason(servers.trusted, 'write', { readOnlyHint: false })).toBe('not_read_only');
  });
});
