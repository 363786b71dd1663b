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

/** Waits (at most `ms`) until `cond` holds. */
async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('follows a run another writer appends to when no wake-up ever comes (each event once, in order, through run_finished)', async () => {
  await newRun('run_e');
  // The tail's process is told nothing: its own RunEvents is not the writer's, and its store never wakes it
  // (a replica whose listening connection is down).
  const writer = new RunEvents(h.store, h.clock);
  const deaf = {
    getRun: h.store.getRun.bind(h.store),
    listEvents: h.store.listEvents.bind(h.store),
    onWake: () => () => {},
  };
  await writer.emit('run_e', 'text_delta', { text: 'stored' });
  const r = recorder();
  const done = tailEvents({ store: deaf, events }, 'run_e', 0, r.sink, 'stop');
  await until(() => r.written.includes('1:text_delta'), 'the stored event was replayed');
  await writer.emit('run_e', 'text_delta', { text: 'live 1' });
  await until(() => r.written.includes('2:text_delta'), 'an event appended elsewhere arrived');
  await writer.emit('run_e', 'text_delta', { text: 'live 2' });
  await writer.emit('run_e', 'run_finished', receipt);
  // The run ends as its replica ends it: status first, then the receipt is already in the log.
  await h.store.transitionRun('run_e', ['queued'], 'planned', { finishedAt: h.clock.now() });
  await done;
  expect(r.written).toEqual(['1:text_delta', '2:text_delta', '3:text_delta', '4:run_finished']);
});

it('reads the log once more before giving up on an ended run (its receipt came unannounced)', async () => {
  await newRun('run_f');
  await h.store.transitionRun('run_f', ['queued'], 'failed', { finishedAt: h.clock.now() });
  const writer = new RunEvents(h.store, h.clock);
  let statusReads = 0;
  const deaf = {
    getRun: (id: string) => {
      statusReads += 1;
      return h.store.getRun(id);
    },
    listEvents: h.store.listEvents.bind(h.store),
    onWake: () => () => {},
  };
  const r = recorder();
  const done = tailEvents({ store: deaf, events }, 'run_f', 0, r.sink, 'replay');
  // The tail has found the run ended and waits for its receipt; the receipt is written, and no one says so.
  await until(() => statusReads > 0, 'the tail read the run status');
  await writer.emit('run_f', 'text_delta', { text: 'last words' });
  await writer.emit('run_f', 'run_finished', { ...receipt, status: 'failed', error: 'x', plan_id: null });
  await done;
  expect(r.written).toEqual(['1:text_delta', '2:run_finished']);
});
