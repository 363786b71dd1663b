import { afterEach, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { createHarness, type Harness } from '../support/harness.js';

// Two replicas on one PostgreSQL database, each with its own services and HTTP app: a cap is counted from the
// runs in the database, so what one replica started counts against what the other may start.

const T0 = Date.parse('2026-06-01T10:00:00.000Z');

let a: Harness<Store> | undefined;
let b: Harness<Store> | undefined;
afterEach(async () => {
  // The second replica lets go first: the first one drops the database.
  await b?.close();
  await a?.close();
  a = b = undefined;
});

const fire = (h: Harness<Store>, t: { id: string; token: string }) =>
  h.call('POST', `/v1/triggers/${t.id}/fire`, { token: t.token, body: {} });

it("two replicas share a trigger's count: runs either started and receipts either wrote", async () => {
  a = await createHarness({ store: 'postgres', now: T0 });
  b = await createHarness({ store: a.database!, now: T0 });
  const created = await a.call('POST', '/v1/triggers', {
    role: 'admin',
    body: {
      kind: 'generic',
      name: 'shared',
      prompt: 'Triage {{trigger}}.',
      workspace: a.workspace,
      limits: { daily_runs: 3, daily_usd: 5 },
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const t = created.body;

  expect((await fire(a, t)).status).toBe(201);
  const second = await fire(b, t);
  expect(second.status).toBe(201);
  // Replica B wrote a receipt past daily_usd: replica A refuses the next fire for it.
  await b.store.updateRun(second.body.run.id, { costUsd: 5 });
  const refused = await fire(a, t);
  expect(refused.status).toBe(429);
  expect(refused.body.error.details).toMatchObject({
    scope: 'trigger',
    cap: 'daily_usd',
    spent: 5,
    limit: 5,
  });

  // The cap lifted (an admin raised daily_usd on replica B): the third run starts, the fourth meets daily_runs.
  const raised = await b.call('PATCH', `/v1/triggers/${t.id}`, {
    role: 'admin',
    body: { limits: { daily_runs: 3, daily_usd: 50 } },
  });
  expect(raised.status, JSON.stringify(raised.body)).toBe(200);
  expect((await fire(a, t)).status).toBe(201);
  const counted = await fire(b, t);
  expect(counted.status).toBe(429);
  expect(counted.body.error.details).toMatchObject({ cap: 'daily_runs', spent: 3, limit: 3 });

  // The day's note of a cap is written once, whichever replica meets it first.
  expect(await a.store.noteSpendCap('trigger', t.id, '2026-06-01', 'daily_runs', T0)).toBe(false);
  expect(await b.store.noteSpendCap('trigger', 'trg_other', '2026-06-01', 'daily_runs', T0)).toBe(true);
  expect(await a.store.noteSpendCap('trigger', 'trg_other', '2026-06-01', 'daily_runs', T0)).toBe(false);

  // Both see the same usage (PostgreSQL's day list: VALUES with typed parameters).
  const usageA = await a.call('GET', '/v1/usage?by=trigger&from=2026-06-01&to=2026-06-01');
  const usageB = await b.call('GET', '/v1/usage?by=trigger&from=2026-06-01&to=2026-06-01');
  expect(usageA.status).toBe(200);
  expect(usageA.body).toEqual(usageB.body);
  expect(usageA.body.rows).toEqual([
    { day: '2026-06-01', key: t.id, name: 'shared', runs: 3, cost_usd: 5, input_tokens: 0, output_tokens: 0 },
  ]);
});
