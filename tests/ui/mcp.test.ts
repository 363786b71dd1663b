import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { seedPlan, seedToolApproval, signIn, ui } from './helpers.js';

// What the web page shows of MCP calls: a pending one names its server and its tool beside the exact input;
// the plan page lists the planning run's MCP calls (server, tool, input summary), escaped like all model text.

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => h.close());

describe('MCP calls on the web page', () => {
  it('a pending MCP call shows its server, its tool and its input', async () => {
    const { plan, run } = await seedPlan(h);
    await seedToolApproval(h, plan, run, {
      toolUseId: 'toolu_mcp',
      tool: 'mcp__tracker__create_issue',
      input: { title: '<b>Flaky</b> test' },
    });
    const me = await signIn(h.app, h.tokens.approver);
    const page = (await ui(h.app, 'GET', '/ui/tool-approvals', { cookie: me.cookie })).text;
    expect(page).toContain(
      'Calls the tool <code>create_issue</code> of MCP server <strong>tracker</strong> with this input:',
    );
    expect(page).toContain('&lt;b&gt;Flaky&lt;/b&gt; test');
    expect(page).not.toContain('<b>Flaky</b>');
  });

  it("the plan page lists the planning run's MCP calls beside the files read", async () => {
    const { plan, run } = await seedPlan(h);
    await h.store.appendMessages(
      run.id,
      run.id,
      [
        { role: 'user', content: [{ type: 'text', text: 'Plan something' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_q', name: 'mcp__db__query', input: { sql: 'select <1>' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_q', content: '1 row' }] },
      ],
      h.clock.now(),
    );
    const me = await signIn(h.app, h.tokens.viewer);
    const page = (await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie })).text;
    expect(page).toContain('<h2 id="mcp-calls">MCP calls</h2>');
    const table = page.slice(
      page.indexOf('id="mcp-calls-table"'),
      page.indexOf('</table>', page.indexOf('id="mcp-calls-table"')),
    );
    expect(table).toContain('<td>db</td><td><code>query</code></td>');
    expect(table).toContain('{&quot;sql&quot;:&quot;select &lt;1&gt;&quot;}');
  });
});
