import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { FakeClock } from '../support/fake-clock.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, type ScriptedResponse, startModelServer } from '../support/model-server.js';

// A run going when its session's daily_usd is crossed: the real agent loop through the SDK against the
// Messages API stand-in, on the injected clock. The turn that crossed the cap finishes (its tool call runs and
// is stored); no request is sent past it; the run waits on spend_cap until midnight of limits.timezone.

let model: ModelServer | undefined;
let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  await model?.close();
  d = model = undefined;
});

/** 2026-12-04 22:00 in New York (UTC-5): its day ends at 05:00 UTC. */
const START = Date.parse('2026-12-05T03:00:00.000Z');
const NY_MIDNIGHT = Date.parse('2026-12-05T05:00:00.000Z');

const glob: ScriptedResponse = {
  kind: 'message',
  content: [{ type: 'tool_use', id: 'g1', name: 'Glob', input: { pattern: '*.txt' } }],
};
const plan: ScriptedResponse = {
  kind: 'message',
  content: [{ type: 'tool_use', id: 'p1', name: 'ExitPlanMode', input: { plan: '## plan\n- step' } }],
};

function runIn(runId: string, status: string, also: (run: any) => boolean = () => true): Promise<any> {
  return waitFor(
    async () => {
      const r = await d!.api('GET', `/v1/runs/${runId}`);
      return r.body.status === status && also(r.body) ? r.body : undefined;
    },
    15_000,
    `run ${runId} ${status}`,
  );
}

it("a run that crosses its session's daily_usd finishes its turn, waits on spend_cap, and goes on when the day resets", async () => {
  const clock = new FakeClock(START);
  model = await startModelServer();
  d = await startTestDaemon({
    modelUrl: model.url,
    clock,
    patch: (c) => {
      c.limits.timezone = 'America/New_York';
    },
  });
  const repo = join(d.dir, 'repo');
  makeRepo(repo, { 'a.txt': 'hello\n' });
  // Any turn costs more than this: the first one crosses it.
  const s = await d.api('POST', '/v1/sessions', { workspace: repo, limits: { daily_usd: 0.000001 } });
  expect(s.status, JSON.stringify(s.body)).toBe(201);
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, { cron: '0 9 * * *', prompt: 'plan it' });
  model.enqueue(glob, plan);
  const started = await d.api('POST', `/v1/jobs/${j.body.id}/run`);
  expect(started.status).toBe(201);
  const runId = started.body.id;

  const waiting = await runIn(runId, 'awaiting_input', (r) => r.waiting?.on === 'spend_cap');
  expect(waiting.waiting.until).toBe(new Date(NY_MIDNIGHT).toISOString());
  // One request: the turn that crossed the cap; its tool call ran and is in the log; no request after it.
  expect(model.requests).toHaveLength(1);
  const events = (await d.daemon.store.listEvents(runId, 0, 1000)).map((e) => ({
    type: e.type,
    data: e.data,
  }));
  expect(events.some((e) => e.type === 'tool_result')).toBe(true);
  const reached = events.find((e) => e.type === 'spend_cap_reached');
  expect(reached?.data).toMatchObject({
    scope: 'session',
    id: s.body.id,
    cap: 'daily_usd',
    limit: 0.000001,
    resets_at: new Date(NY_MIDNIGHT).toISOString(),
  });
  const detail = await d.api('GET', `/v1/runs/${runId}`);
  expect(detail.body.waiting_on).toMatchObject({
    kind: 'spend_cap',
    until: new Date(NY_MIDNIGHT).toISOString(),
  });
  // A new run of the session is refused meanwhile.
  const refused = await d.api('POST', `/v1/jobs/${j.body.id}/run`);
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe('spend_cap');

  // Not yet at 04:59:59.999 UTC (still the 4th in New York).
  clock.set(NY_MIDNIGHT - 1);
  expect((await d.api('GET', `/v1/runs/${runId}`)).body.waiting?.on).toBe('spend_cap');
  expect(model.requests).toHaveLength(1);
  // Midnight in New York: a new day, nothing spent in it yet; the run goes on from its stored conversation.
  clock.set(NY_MIDNIGHT);
  await runIn(runId, 'planned');
  expect(model.requests).toHaveLength(2);
});
