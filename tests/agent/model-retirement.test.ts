import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { jobIn, proposes, runUntil } from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FakeClock } from '../support/fake-clock.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// A session stored on a model that retires while the daemon runs: its next run fails at once with the
// retirement and the replacement, and not one request reaches the Messages API (which would answer 404).
// The daemon and the strict stand-in share one fake clock: both see the same retirement date.

let clock: FakeClock;
let model: ModelServer;
let d: TestDaemon | undefined;

beforeEach(async () => {
  clock = new FakeClock(Date.parse('2026-11-29T18:00:00Z'));
  model = await startModelServer({ clock });
});

afterEach(async () => {
  await d?.stop();
  d = undefined;
  await model.close();
});

describe('the default model at start', () => {
  it('warns when it retires within 30 days; notes a legacy one', async () => {
    const lines: { level: number; msg: string; model?: string }[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    d = await startTestDaemon({
      modelUrl: model.url,
      clock,
      logger,
      patch: (c) => {
        c.anthropic.model = 'claude-sonnet-4-5';
      },
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        model: 'claude-sonnet-4-5',
        msg: 'claude-sonnet-4-5 retires on 2026-11-30 (in 1 day); move to claude-sonnet-5-5 before then',
      }),
    );
    await d.stop();
    lines.length = 0;
    d = await startTestDaemon({
      modelUrl: model.url,
      clock,
      logger,
      patch: (c) => {
        c.anthropic.model = 'claude-haiku-4-5';
      },
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'claude-haiku-4-5 is a legacy model (no more updates, may be deprecated later); consider claude-haiku-5-5',
      }),
    );
    expect(lines.filter((l) => l.level >= 40 && l.model !== undefined)).toEqual([]);
  });
});

describe('a model that retires while the daemon runs', () => {
  it('serves the day before; from the day on, the run fails naming the replacement, with no request sent', async () => {
    d = await startTestDaemon({ modelUrl: model.url, clock });
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'README.md': '# demo\n' });
    // Created the day before the retirement: Sonnet 4.5 is retiring (in 1 day), not yet refused.
    const { jobId } = await jobIn(d, repo, { model: 'claude-sonnet-4-5' });

    model.enqueue(proposes());
    const first = await d.api('POST', `/v1/jobs/${jobId}/run`);
    expect(first.status).toBe(201);
    const planned = await runUntil(d, first.body.id, ['planned', 'failed']);
    expect(planned.status, planned.error).toBe('planned');
    const served = model.requests.length;
    expect(served).toBeGreaterThan(0);
    expect(model.requests.every((r) => r.body?.model === 'claude-sonnet-4-5' && r.status === 200)).toBe(true);

    // Midnight UTC: the model has retired. The stored session still names it.
    clock.set(Date.parse('2026-11-30T00:00:00Z'));
    model.enqueue(proposes('plan-2'));
    const next = await d.api('POST', `/v1/jobs/${jobId}/run`);
    expect(next.status).toBe(201);
    const failed = await runUntil(d, next.body.id, ['planned', 'failed']);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      'claude-sonnet-4-5 retired on 2026-11-30 and no longer answers; use claude-sonnet-5-5 (docs/models.md). ' +
        'No request was sent: set the model of the session, job or trigger',
    );
    expect(model.requests.length).toBe(served);
    expect(model.remaining()).toBe(1);
  });
});
