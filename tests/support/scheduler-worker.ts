import { parentPort, workerData } from 'node:worker_threads';
import { defaultConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/logger.js';
import { jitterOptions } from '../../src/scheduler/job-request.js';
import { Scheduler } from '../../src/scheduler/loop.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { FakeClock } from './fake-clock.js';

// A scheduler with its own connection to the database (a SQLite file, or a pool of its own on a PostgreSQL
// database): a second daemon, truly concurrent with the first. It runs in a worker thread (its settings in
// workerData) or in a child process made by fork() (its settings as JSON in argv[2]); either way the test
// drives its clock by messages: `ready` once the store is open, then `ticked` for each `tick` and `closed`
// for `close`.

/** What a scheduler worker is started with. */
export interface SchedulerWorkerData {
  /** The SQLite file, or the PostgreSQL database's URL (migrated already). */
  store: { file: string } | { url: string };
  batchSize: number;
}

export type SchedulerWorkerRequest = { type: 'tick'; now: number } | { type: 'close' };

export type SchedulerWorkerReply =
  | { type: 'ready' }
  | { type: 'ticked'; fired: { id: string; jobId: string | null; slotAt: number | null }[] }
  | { type: 'closed' };

interface Channel {
  data: SchedulerWorkerData;
  on(listener: (msg: SchedulerWorkerRequest) => void): void;
  /** Resolves once the message is handed over. */
  send(msg: SchedulerWorkerReply): Promise<void>;
  /** Lets the worker end once the store is closed. */
  end(): void;
}

function channel(): Channel {
  const port = parentPort;
  if (port) {
    return {
      data: workerData as SchedulerWorkerData,
      on: (listener) => port.on('message', listener),
      send: async (msg) => port.postMessage(msg),
      // The thread's owner terminates it.
      end: () => {},
    };
  }
  // node:child_process fork(): process.send and the 'message' event exist only with the IPC channel fork
  // opens; send's callback runs once the message is sent; process.disconnect() closes the channel, so that
  // the process can exit (nodejs.org/api/process.html, process.send and process.disconnect).
  const send = process.send?.bind(process);
  if (!send) throw new Error('scheduler-worker: start it as a worker thread or with child_process.fork');
  return {
    data: JSON.parse(process.argv[2] ?? '') as SchedulerWorkerData,
    on: (listener) => process.on('message', listener as (msg: unknown) => void),
    send: (msg) =>
      new Promise<void>((resolve, reject) => {
        send(msg, (err: Error | null) => (err ? reject(err) : resolve()));
      }),
    end: () => process.disconnect(),
  };
}

const io = channel();
const { store: where, batchSize } = io.data;
const clock = new FakeClock(0);
const store: Store =
  'file' in where
    ? new SqliteStore({ file: where.file, now: () => clock.now() })
    : await openPostgresStore({ url: where.url, migrate: false });
const fired: { id: string; jobId: string | null; slotAt: number | null }[] = [];
const config = defaultConfig();
const scheduler = new Scheduler({
  store,
  clock,
  logger: silentLogger(),
  onRun: (run) => fired.push({ id: run.id, jobId: run.jobId, slotAt: run.slotAt }),
  catchupWindowMs: config.scheduler.catchup_window_ms,
  maxWaitMs: config.scheduler.max_wait_ms,
  batchSize,
  jitter: { ...jitterOptions(config), enabled: false },
  maxBuffered: 100,
  cancelRun: async () => false,
});

io.on(async (msg) => {
  if (msg.type === 'close') {
    await store.close();
    await io.send({ type: 'closed' });
    io.end();
    return;
  }
  clock.set(msg.now);
  fired.length = 0;
  await scheduler.tick();
  for (const r of fired) await store.transitionRun(r.id, ['queued'], 'completed', { finishedAt: msg.now });
  await io.send({ type: 'ticked', fired: [...fired] });
});
await io.send({ type: 'ready' });
