import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../src/cli/client.js';
import { followEvents } from '../../src/cli/event-stream.js';
import type { RunEventMap, RunEventType } from '../../src/domain/events.js';
import { newId } from '../../src/ids.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';
import { runCli, startCli } from './cli-process.js';

// `drydock runs follow`: the daemon's real event stream of a run that goes on while the CLI listens, and a
// tiny SSE server that drops the connection mid-stream to check the reconnect with Last-Event-ID.

vi.setConfig({ testTimeout: 60_000 });

let d: TestDaemon;
let workspace: { path: string; remove(): void };

beforeAll(async () => {
  workspace = tempDir('drydock-cli-follow-ws-');
  d = await startTestDaemon({ maxRetries: 0, timeoutMs: 2_000 });
});

afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

const env = () => ({ DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN });

/** A run the agent loop is working on (no model runs here: the test writes its events). */
async function runningRun(): Promise<string> {
  const res = await d.api('POST', '/v1/sessions', { workspace: workspace.path });
  const now = Date.now();
  const run = await d.daemon.store.createRun({
    id: newId('run'),
    sessionId: res.body.id,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'Plan a cache',
    requestedBy: 'admin',
    createdAt: now,
  });
  expect(await d.daemon.store.transitionRun(run.id, ['queued'], 'running', { startedAt: now })).toBe(true);
  return run.id;
}

describe('drydock runs follow (the daemon)', () => {
  it('prints one line per event as the run goes on, joins deltas into lines, and exits 0 when it is planned', async () => {
    const runId = await runningRun();
    // Payloads with fields left out: the CLI prints what an event carries (and older daemons sent less).
    const emit = <K extends RunEventType>(type: K, data: Partial<RunEventMap[K]>) =>
      d.daemon.events.emit(runId, type, data as RunEventMap[K]);
    await emit('run_started', { phase: 'plan', model: 'claude-sonnet-5-5', attempt: 1 });
    await emit('thinking_delta', { text: 'Look at the ' });
    await emit('thinking_delta', { text: 'handler first.' });

    const follow = startCli(['runs', 'follow', runId], env());
    // The CLI is following before the rest of the run happens.
    await waitFor(
      async () => follow.stdout().includes('Look at the handler first.'),
      20_000,
      'the CLI to print the replay',
    );
    await emit('text_delta', { text: 'I will read\nthe hand' });
    await emit('text_delta', { text: 'ler.\n' });
    await emit('tool_use', {
      tool: 'Read',
      tool_use_id: 'tu_1',
      input: { file_path: 'src/app.ts', limit: 20 },
    });
    await emit('tool_result', {
      tool: 'Read',
      tool_use_id: 'tu_1',
      is_error: false,
      truncated: false,
      chars: 1234,
    });
    await emit('model_retry', { attempt: 1, next_attempt_in_ms: 2000, cause: 'overloaded (529)' });
    await emit('question_request', {
      question_id: 'q_1',
      questions: [
        {
          question: 'Which store?',
          header: 'Store',
          options: [
            { label: 'Redis', description: '' },
            { label: 'LRU', description: '' },
          ],
          multiSelect: false,
        },
      ],
    });
    await emit('turn_finished', { turn: 1, stop_reason: 'tool_use', cost_usd: 0.0123 });
    await emit('plan_proposed', {
      plan_id: 'pln_1',
      sha256: 'abcdef0123456789',
      round: 1,
      markdown: '# Add a cache\n\n1. LRU',
    });
    await d.daemon.store.transitionRun(runId, ['running'], 'planned', { finishedAt: Date.now() });
    await emit('run_finished', {
      status: 'planned',
      turns: 1,
      cost_usd: 0.0123,
      duration_ms: 4200,
      plan_id: 'pln_1',
    });

    const r = await follow.done;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      '• run started: plan phase, model claude-sonnet-5-5, attempt 1',
      '  thinking │ Look at the handler first.',
      '  │ I will read',
      '  │ the handler.',
      '• tool Read: file_path=src/app.ts, limit=20',
      '  ↳ Read done (1234 chars)',
      '• model retry: attempt 1 failed (overloaded (529)); next in 2.0 s',
      '• question q_1: Which store? (Redis | LRU) — drydock questions answer q_1 --answer "Question=Label"',
      '• turn 1 finished: tool_use, $0.0123',
      '• plan proposed: pln_1 (round 1, sha256 abcdef012345) Add a cache — drydock plans show pln_1',
      '• run finished: planned, 1 turn(s), $0.0123, 4.2 s, plan pln_1',
      '',
    ]);

    // --json replays the whole log of the ended run as the API's JSON, one event a line.
    const json = await runCli(['runs', 'follow', runId, '--json'], env());
    expect(json.code, json.stderr).toBe(0);
    const events = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual([
      'run_started',
      'thinking_delta',
      'thinking_delta',
      'text_delta',
      'text_delta',
      'tool_use',
      'tool_result',
      'model_retry',
      'question_request',
      'turn_finished',
      'plan_proposed',
      'run_finished',
    ]);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(events[5].input).toEqual({ file_path: 'src/app.ts', limit: 20 });
  });

  it('a run that failed is exit 1 with its error; an unknown run is exit 1 with the 404', async () => {
    const runId = await runningRun();
    await d.daemon.store.transitionRun(runId, ['running'], 'failed', {
      finishedAt: Date.now(),
      error: 'boom',
    });
    await d.daemon.events.emit(runId, 'run_finished', {
      // usage, active_ms and plan_id left out, as a daemon before them sent it.
      status: 'failed',
      error: 'boom',
      turns: 0,
      cost_usd: 0,
      duration_ms: 10,
    } as RunEventMap['run_finished']);
    const r = await runCli(['runs', 'follow', runId], env());
    expect(r).toEqual({
      code: 1,
      stdout: '• run finished: failed, 0 turn(s), $0.0000, 0.0 s\n  error: boom\n',
      stderr: '',
    });
    const missing = await runCli(['runs', 'follow', 'run_nope'], env());
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: 'drydock: 404 not_found: run run_nope not found\n',
    });
  });
});

describe('drydock runs follow (a connection that drops)', () => {
  it('reconnects with Last-Event-ID and prints each event once', async () => {
    const seen: (string | undefined)[] = [];
    const sse = (id: number, type: string, data: Record<string, unknown>) =>
      `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ seq: id, type, at: new Date(0).toISOString(), ...data })}\n\n`;
    const server: Server = createServer((req, res) => {
      if (req.url === '/v1/runs/run_x') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'run_x', status: 'running' }));
        return;
      }
      seen.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (seen.length === 1) {
        res.write(sse(1, 'run_started', { phase: 'plan', model: 'm', attempt: 1 }));
        res.write(sse(2, 'text_delta', { text: 'half a ' }));
        // Gone in the middle of the stream, before the run ended.
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      res.write(': keep-alive\n\n');
      res.write(sse(3, 'text_delta', { text: 'line\n' }));
      res.end(sse(4, 'run_finished', { status: 'completed', turns: 2, cost_usd: 0.5, duration_ms: 1000 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const r = await runCli(['runs', 'follow', 'run_x'], {
        DRYDOCK_URL: `http://127.0.0.1:${port}`,
        DRYDOCK_TOKEN: 'tok-1234',
      });
      expect(seen).toEqual([undefined, '2']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^drydock: .*; reconnecting after event 2\n$/);
      expect(r.stdout).toBe(
        [
          '• run started: plan phase, model m, attempt 1',
          '  │ half a line',
          '• run finished: completed, 2 turn(s), $0.5000, 1.0 s',
          '',
        ].join('\n'),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('followEvents', () => {
  it('the request timeout bounds the wait for headers only, not a stream that goes on longer', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const tick = setInterval(() => {
        n += 1;
        if (n < 8) {
          res.write(`id: ${n}\nevent: text_delta\ndata: {"n":${n}}\n\n`);
          return;
        }
        clearInterval(tick);
        res.end(`id: ${n}\nevent: run_finished\ndata: {"n":${n}}\n\n`);
      }, 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      // A 300 ms request timeout; the stream lasts about 800 ms.
      const client = new ApiClient(`http://127.0.0.1:${port}`, 'tok', 300);
      const reconnects: string[] = [];
      const ids: (string | null)[] = [];
      for await (const e of followEvents(client, '/events', {
        last: 'run_finished',
        ended: async () => false,
        onReconnect: (_id, reason) => reconnects.push(reason),
      })) {
        ids.push(e.id);
      }
      expect(reconnects).toEqual([]);
      expect(ids).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
