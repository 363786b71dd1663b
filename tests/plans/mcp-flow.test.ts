import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Config, configSchema } from '../../src/config/schema.js';
import { git } from '../support/git-repo.js';
import { EVERYTHING, NODE_MODULES, startEverythingHttp } from '../support/mcp.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { calls, planned, proposes, runUntil, says, type World, world } from './helpers.js';

// The whole loop with an MCP server, once on each transport: the registry's server-everything, started by
// drydock over stdio (in the sandbox) or by the test over streamable HTTP. Plan mode calls the tool the
// configuration names read-only (echo); the execute phase, in auto mode, calls one its auto_tools names
// (get-sum) besides Write; the plan's context lists the MCP calls of the planning run.

let model: ModelServer;
let w: World;
let stopServer: (() => Promise<void>) | null = null;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  await stopServer?.();
  stopServer = null;
  await model.close();
});

const TRANSPORTS = ['stdio', 'streamable HTTP'] as const;

/** The server's entry under mcp.servers for `transport`: echo for plan mode, get-sum unattended. */
async function everything(transport: (typeof TRANSPORTS)[number]): Promise<Record<string, unknown>> {
  const rules = { plan_tools: ['echo'], auto_tools: ['get-sum'] };
  if (transport === 'stdio') {
    return {
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      read_only_paths: [NODE_MODULES],
      ...rules,
    };
  }
  const http = await startEverythingHttp();
  stopServer = http.stop;
  return { url: http.url, ...rules };
}

const mcpNames = (r: { body: { tools: { name: string }[] } }) =>
  r.body.tools.map((t) => t.name).filter((n) => n.startsWith('mcp__everything__'));

function resultFor(id: string): { content: string; is_error?: boolean } {
  for (const r of [...model.requests].reverse()) {
    for (const m of r.body.messages) {
      if (m.role !== 'user' || !Array.isArray(m.content)) continue;
      const hit = m.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === id);
      if (hit) return hit;
    }
  }
  throw new Error(`no tool_result for ${id}`);
}

describe.each(TRANSPORTS)('the whole loop with an MCP server over %s', (transport) => {
  it('plans with a read-only MCP tool, is approved, executes with an auto_tools one and commits', async () => {
    const entry = await everything(transport);
    const patch = (c: Config) => {
      c.mcp = configSchema.parse({ mcp: { servers: { everything: entry } } }).mcp;
    };
    w = await world(model, { mcp: ['everything'], execute_mode: 'auto' }, patch);
    const alice = await w.token('alice');
    model.enqueue(
      calls('e1', 'mcp__everything__echo', { message: 'what does the tracker say?' }),
      proposes('p1'),
      calls('s1', 'mcp__everything__get-sum', { a: 2, b: 3 }),
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello, world\n' }),
      says('Summed and wrote hello.txt.'),
    );

    const { plan } = await planned(w);
    // Plan mode listed the plan tool only; the next turn sent the same tools (the conversation's frame).
    expect(mcpNames(model.requests[0]!)).toEqual(['mcp__everything__echo']);
    expect(model.requests[1]!.body.tools).toEqual(model.requests[0]!.body.tools);
    const echoed = resultFor('e1');
    expect(echoed.is_error).toBeUndefined();
    expect(echoed.content).toContain('what does the tracker say?');
    expect(plan.context.mcp_calls).toEqual([
      {
        server: 'everything',
        tool: 'echo',
        input: '{"message":"what does the tracker say?"}',
        round: 1,
        calls: 1,
        errors: 0,
      },
    ]);

    const approve = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approve.status, JSON.stringify(approve.body)).toBe(200);
    const exec = await runUntil(w.d, approve.body.run.id, ['completed', 'failed'], 30_000);
    expect(exec.status, exec.error).toBe('completed');

    // The execute conversation opened with the MCP calls of the planning run, like the files read.
    const brief = model.requests[2]!.body.messages[0].content.at(-1).text as string;
    expect(brief).toContain('MCP tools called while planning');
    expect(brief).toContain('- everything echo {"message":"what does the tracker say?"}');
    // The execute phase listed every tool of the server, and ran get-sum without asking anyone.
    const execNames = mcpNames(model.requests[2]!);
    expect(execNames).toContain('mcp__everything__get-sum');
    expect(execNames).toContain('mcp__everything__echo');
    expect(execNames.length).toBeGreaterThan(2);
    const sum = resultFor('s1');
    expect(sum.is_error).toBeUndefined();
    expect(sum.content).toMatch(/\b5\b/);
    expect((await w.d.api('GET', '/v1/tool-approvals')).body.items).toEqual([]);
    expect(git(w.repo, 'show', `drydock/${plan.id}:hello.txt`)).toBe('hello, world');
  });
});
