import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

// A real MCP server (the official SDK's McpServer over its streamable HTTP transport, on loopback) whose
// tools have visible effects: every call that reaches it is recorded in `calls`, so a test proves from the
// server's side what was called and what never was. Its tools carry the annotations a server may claim:
// - list_notes: readOnlyHint true (a read);
// - add_note: readOnlyHint false, destructiveHint false (adds, changes nothing else);
// - delete_notes: destructiveHint true.

export interface NotesServer {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  url: string;
  /** Every tool call the server received, in order. */
  calls: { tool: string; input: Record<string, unknown> }[];
  notes: string[];
  /** Tools the server no longer lists to clients that connect from now on. */
  gone: Set<string>;
  /** MCP sessions open now (a client that closed its session has none). */
  openSessions(): number;
  close(): Promise<void>;
}

function notesMcp(state: Pick<NotesServer, 'calls' | 'notes' | 'gone'>): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  const tools: Record<string, { remove(): void }> = {};
  tools.list_notes = server.registerTool(
    'list_notes',
    {
      description: 'Lists the notes',
      inputSchema: {},
      annotations: { readOnlyHint: true, destructiveHint: false },
    },
    async () => {
      state.calls.push({ tool: 'list_notes', input: {} });
      return { content: [{ type: 'text', text: state.notes.join('\n') || '(no notes)' }] };
    },
  );
  tools.add_note = server.registerTool(
    'add_note',
    {
      description: 'Adds a note',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ text }) => {
      state.calls.push({ tool: 'add_note', input: { text } });
      state.notes.push(text);
      return { content: [{ type: 'text', text: `noted: ${text}` }] };
    },
  );
  tools.delete_notes = server.registerTool(
    'delete_notes',
    {
      description: 'Deletes every note',
      inputSchema: {},
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async () => {
      state.calls.push({ tool: 'delete_notes', input: {} });
      state.notes.length = 0;
      return { content: [{ type: 'text', text: 'deleted' }] };
    },
  );
  for (const [name, tool] of Object.entries(tools)) if (state.gone.has(name)) tool.remove();
  return server;
}

/** Starts the notes server on 127.0.0.1 (a port of its own); one MCP session per client that connects. */
export async function startNotesServer(): Promise<NotesServer> {
  const state = { calls: [] as NotesServer['calls'], notes: [] as string[], gone: new Set<string>() };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string') {
        res.writeHead(404).end();
        return;
      }
      const made = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, made);
        },
      });
      made.onclose = () => {
        if (made.sessionId) sessions.delete(made.sessionId);
      };
      await notesMcp(state).connect(made);
      transport = made;
    }
    await transport.handleRequest(req, res);
  };
  const http: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: state.calls,
    notes: state.notes,
    gone: state.gone,
    openSessions: () => sessions.size,
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
