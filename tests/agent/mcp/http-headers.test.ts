import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpConnector, McpStartError } from '../../../src/agent/mcp/index.js';
import { systemClock } from '../../../src/clock.js';
import { mcpConfig, memoryLogger } from '../../support/mcp.js';

// A streamable HTTP server gets its headers with the secrets they name; what it answers (here, a refusal that
// echoes the credential back) never carries the secret into an error or a log.

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe('a streamable HTTP server', () => {
  it('gets the header its entry names, and its echo of the secret is redacted', async () => {
    const seen: IncomingHttpHeaders[] = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end(`refused credential ${req.headers.authorization}`);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const { logger, text } = memoryLogger();
    const connector = createMcpConnector({
      config: mcpConfig({
        tracker: {
          url: `http://127.0.0.1:${port}/mcp`,
          headers: { Authorization: `Bearer \${TRACKER_TOKEN}` },
        },
      }),
      logger,
      clock: systemClock,
      env: { TRACKER_TOKEN: 'trk-51d0e7aa' },
    });
    const err = await connector
      .open(['tracker'], { signal: new AbortController().signal, runId: 'run_http' })
      .catch((e: unknown) => e);
    expect(seen[0]?.authorization).toBe('Bearer trk-51d0e7aa');
    expect(err).toBeInstanceOf(McpStartError);
    expect((err as Error).message).toMatch(
      /^MCP server tracker: could not start: .*Error POSTing to endpoint/,
    );
    expect((err as Error).message).toContain('[redacted]');
    expect((err as Error).message).not.toContain('trk-51d0e7aa');
    expect(text()).toContain('MCP server did not start');
    expect(text()).not.toContain('trk-51d0e7aa');
  });
});
