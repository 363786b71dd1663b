import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RunEvent } from '../../src/domain/types.js';
import { RunEvents } from '../../src/runs/events.js';
import { type AfterFinish, type TailSink, tailEvents } from '../../src/runs/tail.js';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
let events: RunEvents;
beforeEach(async () => {
  h = await createHarness();
  events = new RunEvents(h.store, h.clock);
});
afterEach(async () => h.close());

async function newRun(id: string): Promise<void> {
  const ses = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace, name: id } });
  await h.store.createRun({
    id,
    sessionId: ses.body.id,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'p',
    requestedBy: 'x',
    createdAt: h.clock.now(),
  });
}

const receipt = {
  status: 'planned',
  error: null,
  turns: 1,
  usage: {},
  cost_usd: 0,
  duration_ms: 1,
  active_ms: 1,
  plan_id: 'pln_1',
} as const;
const decided = {
  plan_id: 'pln_1',
  decision: 'approve',
  identity: 'alice',
  comment: null,
  sha256: 'x',
  plan_status: 'approved',
  run_id: null,
} as const;

/** A sink that records what the tail wrote, and can play a client going away. */
function recorder() {
  const written: string[] = [];
  let leave: (() => void) | null = null;
  const sink: TailSink = {
    event: async (e: RunEvent) => void written.push(`${e.seq}:${e.type}`),
    keepAlive: async () => void written.push('keep-alive'),
    ended: async () => void written.push('end'),
    onAbort: (listener) => {
      leave = listener;
    },
  };
  return { written, sink, leave: () => leave?.() };
}

const tail = (runId: string, after: number, sink: TailSink, afterFinish: AfterFinish) =>
  tailEvents({ store: h.store, events }, runId, after, sink, afterFinish);

it('replays the stored log after `after`; past run_finished only when told to (the API does, the UI does not)', async () => {
  await newRun('run_a');
  await events.emit('run_a', 'text_delta', { text: 'a' });
  await events.emit('run_a', 'text_delta', { text: 'b' });
  await events.emit('run_a', 'run_finished', receipt);
  await events.emit('run_a', 'plan_decided', decided);

  const api = recorder();
  await tail('run_a', 1, api.sink, 'replay');
  expect(api.written).toEqual(['2:text_delta', '3:run_finished', '4:plan_decided']);

  const ui = recorder();
  await tail('run_a', 0, ui.sink, 'stop');
  expect(ui.written).toEqual(['1:text_delta', '2:text_delta', '3:run_finished']);
});

it('follows a live run, each event once, and stops after run_finished', async () => {
  await newRun('run_b');
  await events.emit('run_b', 'text_delta', { text: 'stored' });
  const r = recorder();
  const done = tail('run_b', 0, r.sink, 'stop');
  await events.emit('run_b', 'text_delta', { text: 'live' });
  await events.emit('run_b', 'run_finished', receipt);
  await done;
  expect(r.written).toEqual(['1:text_delta', '2:text_delta', '3:run_finished']);
  // Nothing is written once the tail has returned.
  await events.emit('run_b', 'plan_decided', decided);
  expect(r.written).toHaveLength(3);
});

it('a run that ended without a receipt ends the tail through `ended`', async () => {
  await newRun('run_c');
  await h.store.transitionRun('run_c', ['queued'], 'failed', { finishedAt: h.clock.now() });
  const r = recorder();
  await tail('run_c', 0, r.sink, 'stop');
  expect(r.written).toEqual(['end']);
});

it('a client that goes away ends the tail at once', async () => {
  await newRun('run_d');
  const r = recorder();
  const started = Date.now();
  const done = tail('run_d', 0, r.sink, 'replay');
  await new Promise((resolve) => setTimeout(resolve, 50));
  r.leave();
  await done;
  expect(Date.now() - started).toBeLessThan(5_000);
  await events.emit('run_d', 'text_delta', { text: 'late' });
  expect(r.written).toEqual([]);
});
