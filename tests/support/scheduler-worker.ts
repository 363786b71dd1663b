import { parentPort, workerData } from 'node:worker_threads';
import { defaultConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/logger.js';
import { Scheduler } from '../../src/scheduler/loop.js';
import { jitterOptions } from '../../src/scheduler/plan-job.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeClock } from './fake-clock.js';

// A scheduler in its own thread with its own connection to the database file: a second daemon, truly
// concurrent with the first. The test drives its clock by messages.

const { file, batchSize } = workerData as { file: string; batchSize: number };
const clock = new FakeClock(0);
const store = new SqliteStore({ file, now: () => clock.now() });
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
});

parentPort!.on('message', async (msg: { type: 'tick'; now: number } | { type: 'close' }) => {
  if (msg.type === 'close') {
    await store.close();
    parentPort!.postMessage({ type: 'closed' });
    return;
  }
  clock.set(msg.now);
  fired.length = 0;
  await scheduler.tick();
  for (const r of fired) await store.transitionRun(r.id, ['queued'], 'completed', { finishedAt: msg.now });
  parentPort!.postMessage({ type: 'ticked', fired: [...fired] });
});
