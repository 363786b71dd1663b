import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { packageRoot } from '../../../src/paths.js';
import { createHarness, type Harness, T0 } from '../../support/harness.js';

const MIN = 60_000;
let h: Harness;
const workers: Worker[] = [];

beforeEach(async () => {
  h = await createHarness({
    patch: (c) => {
      c.scheduler.jitter.enabled = false;
    },
  });
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.terminate();
  await h.close();
});

type Fired = { id: string; jobId: string; slotAt: number };

function request(w: Worker, msg: unknown): Promise<{ fired: Fired[] }> {
  return new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
    w.postMessage(msg);
  });
}

it('two schedulers in parallel threads on one file never create two runs for one slot', async () => {
  const jobs = 120;
  for (let i = 0; i < jobs; i++) {
    const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, { body: { cron: '* * * * *', prompt: 'p' } });
  }
  const script = join(packageRoot(), 'dist/tests/support/scheduler-worker.js');
  const file = join(h.config.data_dir, 'drydock.db');
  for (let i = 0; i < 2; i++)
    workers.push(new Worker(script, { workerData: { file, batchSize: 10 + i * 7 } }));

  const all: Fired[][] = [[], []];
  const steps = 8;
  for (let step = 1; step <= steps; step++) {
    const now = T0 + step * MIN;
    const results = await Promise.all(workers.map((w) => request(w, { type: 'tick', now })));
    for (const [i, r] of results.entries()) all[i]!.push(...r.fired);
  }
  const fired = [...all[0]!, ...all[1]!];
  const keys = fired.map((r) => `${r.jobId}@${r.slotAt}`);
  expect(new Set(keys).size).toBe(keys.length);
  expect(fired).toHaveLength(jobs * steps);
  const { n } = h.store.db.prepare('SELECT COUNT(*) AS n FROM runs').get() as { n: number };
  expect(n).toBe(jobs * steps);
  // Which thread wins each slot depends on timing (on a loaded machine one can win them all); what may
  // never vary is the count above: every slot exactly once.
});
