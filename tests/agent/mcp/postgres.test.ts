import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpConnector, type McpConnection } from '../../../src/agent/mcp/index.js';
import { Sandbox } from '../../../src/agent/sandbox.js';
import { systemClock } from '../../../src/clock.js';
import { mcpConfig, memoryLogger, nodeServer, POSTGRES } from '../../support/mcp.js';
import { type FreshDatabase, freshDatabase, postgresAvailable, withClient } from '../../support/postgres.js';

// The registry's server-postgres (its one tool, `query`, runs SQL in a READ ONLY transaction) in the sandbox,
// against a database this test makes on the CI's PostgreSQL: the server reaches 127.0.0.1:5432 only because
// its entry names the port (loopback_ports), through the daemon's forward.

const available = await postgresAvailable('MCP server-postgres');

describe.runIf(available)('server-postgres over stdio', () => {
  let db: FreshDatabase;
  let c: McpConnection;
  const signal = () => new AbortController().signal;

  beforeAll(async () => {
    db = await freshDatabase({ prefix: 'drydock_mcp' });
    await withClient(db.url, async (client) => {
      await client.query('CREATE TABLE incidents (id int PRIMARY KEY, title text NOT NULL)');
      await client.query("INSERT INTO incidents VALUES (1, 'disk full'), (2, 'certificate expired')");
    });
    const port = Number(new URL(db.url).port || 5432);
    const connector = createMcpConnector({
      config: mcpConfig({
        reports: nodeServer(POSTGRES, {
          args: [POSTGRES, db.url],
          loopback_ports: [port],
          plan_tools: ['query'],
        }),
      }),
      logger: memoryLogger().logger,
      sandbox: new Sandbox({ setting: 'bwrap' }),
      clock: systemClock,
      env: {},
    });
    c = await connector.open(['reports'], { signal: signal(), runId: 'run_pg' });
  });
  afterAll(async () => {
    await c?.close();
    await db?.drop();
  });

  it('offers its query tool to plan mode because the configuration names it', () => {
    expect(c.tools.map((t) => [t.name, t.plan, t.annotations])).toEqual([['mcp__reports__query', true, {}]]);
    expect(c.tools[0]!.definition.input_schema).toMatchObject({
      type: 'object',
      properties: { sql: { type: 'string' } },
    });
  });

  it('answers a read-only query from the database the test made', async () => {
    const r = await c.call(
      'mcp__reports__query',
      { sql: 'SELECT id, title FROM incidents ORDER BY id' },
      signal(),
    );
    expect(r.isError).toBe(false);
    const json = r.content.split('\n').slice(2, -1).join('\n');
    expect(JSON.parse(json)).toEqual([
      { id: 1, title: 'disk full' },
      { id: 2, title: 'certificate expired' },
    ]);
  });

  it('refuses a write (the server runs every query read-only), and the rows stay', async () => {
    const r = await c.call('mcp__reports__query', { sql: 'DELETE FROM incidents' }, signal());
    expect(r.isError).toBe(true);
    expect(r.content).toContain('read-only transaction');
    const rows = await withClient(db.url, (client) =>
      client.query('SELECT count(*)::int AS n FROM incidents'),
    );
    expect(rows.rows[0].n).toBe(2);
  });
});
