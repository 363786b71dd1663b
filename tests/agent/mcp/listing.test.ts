import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpConnector, type McpConnection } from '../../../src/agent/mcp/index.js';
import { Sandbox } from '../../../src/agent/sandbox.js';
import { systemClock } from '../../../src/clock.js';
import { FIXTURES, mcpConfig, memoryLogger, nodeServer } from '../../support/mcp.js';

// tools/list is paged (MCP spec, "Tools": nextCursor until it is absent): every page is read once, at open.
// The fixture tests/fixtures/mcp/paged-server.mjs lists four pages, with a name the Messages API refuses
// and a tool listed twice. (A hint of the wrong type fails the listing in the SDK's own check of the result.)

const PAGED = join(FIXTURES, 'paged-server.mjs');
const open: McpConnection[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

describe('tools of a server that lists them in pages', () => {
  it('reads every page, sorts by name, and leaves out what the Messages API would refuse', async () => {
    const c = await createMcpConnector({
      config: mcpConfig({ paged: nodeServer(PAGED, { trust_annotations: true }) }),
      logger: memoryLogger().logger,
      sandbox: new Sandbox({ setting: 'bwrap' }),
      clock: systemClock,
      env: {},
    }).open(['paged'], { signal: new AbortController().signal, runId: 'run_paged' });
    open.push(c);
    expect(c.tools.map((t) => t.name)).toEqual([
      'mcp__paged__alpha',
      'mcp__paged__mid',
      'mcp__paged__omega',
      'mcp__paged__zeta',
    ]);
    expect(c.leftOut).toEqual([
      {
        server: 'paged',
        tool: 'dotted.name',
        reason:
          '"mcp__paged__dotted.name" is not a tool name the Messages API accepts (letters, digits, _ and -, at most 128)',
      },
      { server: 'paged', tool: 'alpha', reason: 'listed twice by the server; the first one is offered' },
      {
        server: 'paged',
        tool: 'spaced',
        reason:
          'its input property "has space" is not a name the Messages API accepts (letters, digits, _ . and -, at most 64)',
      },
    ]);
    // trust_annotations: true, so only zeta's readOnlyHint offers it to plan mode.
    expect(c.tools.map((t) => [t.tool, t.plan, t.annotations])).toEqual([
      ['alpha', false, { destructiveHint: false }],
      ['mid', false, { title: 'Mid' }],
      ['omega', false, {}],
      ['zeta', true, { readOnlyHint: true }],
    ]);
    const r = await c.call('mcp__paged__omega', {}, new AbortController().signal);
    expect(r).toMatchObject({ isError: false, content: expect.stringContaining('\ncalled omega\n') });
  });
});
