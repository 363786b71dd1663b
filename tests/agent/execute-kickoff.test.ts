import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  approveAs,
  jobIn,
  PLAN_MD,
  plannedJob,
  proposes,
  runUntil,
  says,
  tokenFor,
} from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FakeClock } from '../support/fake-clock.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// What the model is told when a person asks for a revision and when a plan is approved is worded by the
// agent's phases (plan-phase.ts and execute-phase.ts `opening`), from the decisions the plan service recorded:
// the plan service keeps no text for the model. The words are the ones the model has always been sent.

let model: ModelServer;
let d: TestDaemon;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await d?.stop();
  await model.close();
});

it('a revision round and an execution approved by two people open with the words the model was always sent', async () => {
  // The clock moves between the two approvals, so their order is the order they were made in.
  const clock = new FakeClock(Date.parse('2026-12-04T10:00:00Z'));
  d = await startTestDaemon({ modelUrl: model.url, clock });
  const repo = join(d.dir, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  const { jobId } = await jobIn(d, repo, { approvals_required: 2, execute_mode: 'auto' }, 'Add a greeting');
  const revised = `${PLAN_MD}3. Say it twice\n`;
  model.enqueue(proposes('p1'), proposes('p2', revised), says('Created nothing; the plan needed no change.'));
  const alice = await tokenFor(d, 'alice');
  const bob = await tokenFor(d, 'bob');

  const first = (await plannedJob(d, jobId)).plan;
  const revise = await d.api('POST', `/v1/plans/${first.id}/revise`, { feedback: 'Twice, please.' }, alice);
  expect(revise.status, JSON.stringify(revise.body)).toBe(200);
  // What the run records for people: the request, in words; the model is told in its own.
  expect(revise.body.run.prompt).toBe(`alice asked for changes to plan ${first.id}:\n\nTwice, please.`);
  const round = await runUntil(d, revise.body.run.id, ['planned', 'failed']);
  expect(round.status, round.error).toBe('planned');
  const asked = model.requests[1]!.body.messages.at(-1).content;
  expect(asked[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'p1' });
  expect(asked.at(-1).text).toBe(
    'alice reviewed your plan and asked for changes:\n\nTwice, please.\n\nRevise the plan: explore further if you need to, then call ExitPlanMode with the complete revised plan (not only the changes).',
  );

  const second = (await d.api('GET', `/v1/plans/${round.plan_id}`)).body;
  const byBob = await d.api('POST', `/v1/plans/${second.id}/approve`, { sha256: second.sha256 }, bob);
  expect(byBob.body.plan.status).toBe('pending_approval');
  clock.advance(1_000);
  const run = await approveAs(d, second, alice);
  expect(run.prompt).toBe(`Execute plan ${second.id}, approved by bob, alice.`);
  const exec = await runUntil(d, run.id, ['completed', 'failed']);
  expect(exec.status, exec.error).toBe('completed');
  const opening: string = model.requests[2]!.body.messages[0].content[0].text;
  expect(opening).toBe(
    [
      'Your plan was approved by bob, alice. Implement the plan you proposed, exactly as written.',
      '',
      `<approved_plan sha256="${second.sha256}">`,
      revised,
      '</approved_plan>',
      '',
      'The task the plan answers, as it was given:',
      '<task>',
      'Add a greeting',
      '</task>',
      '',
      'No files were read while planning.',
    ].join('\n'),
  );
});
