import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  approveAs,
  calls,
  jobIn,
  pendingApproval,
  plannedJob,
  proposes,
  runUntil,
  says,
} from '../plans/helpers.js';
import { waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { createTokenOffline, serveProcess } from '../support/process-daemon.js';
import { verifySignature } from '../support/signature.js';
import { type Receiver, startReceiver } from './receiver.js';

let model: ModelServer | undefined;
let receiver: Receiver | undefined;
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
  await receiver?.close();
  await model?.close();
});

const SECRET = 'outbox-crash-secret-91b2';

it('a receiver that fails the first 3 deliveries, a SIGKILL in between: every event arrives, signed, deduplicable', async () => {
  model = await startModelServer();
  // Fails the first three requests, whatever they carry, then accepts everything. It takes the fourth in but
  // answers only once the daemon that sent it is dead: that daemon never learns it arrived, the next one
  // sends it again (a duplicate the receiver must drop by its id).
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  receiver = await startReceiver({
    secret: SECRET,
    answer: (n) => (n <= 3 ? 503 : 200),
    hold: (n) => (n === 4 ? released : undefined),
  });
  const tmp = tempDir('drydock-notify-crash-');
  dirs.push(tmp);
  const dataDir = join(tmp.path, 'data');
  const configFile = join(tmp.path, 'drydock.yaml');
  writeFileSync(
    configFile,
    `notifications:
  webhooks:
    - url: ${receiver.url}
      secret: ${SECRET}
  max_attempts: 20
  backoff_base_ms: 300
  backoff_max_ms: 1000
  timeout_ms: 10000
  poll_interval_ms: 200
`,
  );
  const serve = () => serveProcess(dataDir, model!.url, children, { DRYDOCK_CONFIG: configFile });
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });

  // First daemon: a question parks one run, a plan waits in another session.
  const first = await serve();
  const asking = await jobIn(first, repo, {}, 'Ask first');
  model.enqueue(
    calls('ask', 'AskUserQuestion', {
      questions: [
        {
          question: 'Which greeting?',
          header: 'Greeting',
          multiSelect: false,
          options: [
            { label: 'Hello', description: 'plain' },
            { label: 'Hi', description: 'short' },
          ],
        },
      ],
    }),
  );
  const fired = await first.api('POST', `/v1/jobs/${asking.jobId}/run`);
  await runUntil(first, fired.body.id, ['awaiting_input']);
  const planning = await jobIn(first, repo, { execute_mode: 'manual' }, 'Add a greeting file');
  model.enqueue(proposes());
  const { plan } = await plannedJob(first, planning.jobId);
  // Killed while the fourth attempt waits for its answer (after three refused ones). Its timeout (10 s) is far
  // longer than the step from its arrival to the kill, so no fifth attempt can come in between on a busy machine.
  await waitFor(async () => receiver!.arrived() >= 4, 60_000, 'a fourth attempt');
  await first.kill();
  release();
  await waitFor(async () => receiver!.requests.length >= 4, 30_000, 'the fourth request to be answered');
  expect(receiver.requests.map((r) => r.status)).toEqual([503, 503, 503, 200]);
  const heldId = receiver.requests[3]!.headers['x-drydock-delivery'];

  // Second daemon on the same data: it picks the outbox up, and announces what happens next.
  const second = await serve();
  const alice = createTokenOffline(dataDir, 'alice', 'approver');
  model.enqueue(calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }), says('done'));
  const exec = await approveAs(second, plan, alice);
  const approval = await pendingApproval(second);
  expect(
    (await second.api('POST', `/v1/tool-approvals/${approval.id}`, { decision: 'allow' }, alice)).status,
  ).toBe(200);
  const done = await runUntil(second, exec.id, ['completed', 'failed']);
  expect(done.status, done.error).toBe('completed');

  const expected = [
    'question.pending',
    'plan.pending',
    'plan.approved',
    'tool_approval.pending',
    'plan.executed',
  ];
  await waitFor(
    async () =>
      expected.every((e) => receiver!.accepted().some((b) => b.event === e)) &&
      // The held one is due again once its hold (timeout_ms + 1 s) has run out.
      receiver!.requests.slice(4).some((r) => r.headers['x-drydock-delivery'] === heldId),
    90_000,
    'every event to arrive',
  );
  // The held one was sent again by the second daemon, with the same id and body.
  const again = receiver.requests.slice(4).filter((r) => r.headers['x-drydock-delivery'] === heldId);
  expect(again.length).toBeGreaterThanOrEqual(1);
  expect(again[0]!.raw).toBe(receiver.requests[3]!.raw);

  // Every request was signed with the secret over its exact body; the header names the body's id and event.
  for (const r of receiver.requests) {
    expect(r.signed).toBe(true);
    expect(verifySignature(SECRET, r.raw, r.headers['x-drydock-signature-256'] as string)).toBe(true);
    const body = JSON.parse(r.raw);
    expect(r.headers['x-drydock-delivery']).toBe(body.id);
    expect(r.headers['x-drydock-event']).toBe(body.event);
  }
  expect(receiver.requests.filter((r) => r.status === 503)).toHaveLength(3);
  // A receiver that keeps the ids it has seen ends with each event exactly once, whatever was repeated.
  const byId = new Map<string, any>();
  for (const b of receiver.accepted()) byId.set(b.id, b);
  expect(receiver.accepted().length).toBeGreaterThan(byId.size);
  const events = [...byId.values()].map((b) => b.event).sort();
  expect(events).toEqual([...expected].sort());
  const announced = Object.fromEntries([...byId.values()].map((b) => [b.event, b.data]));
  expect(announced['plan.pending'].plan_id).toBe(plan.id);
  expect(announced['question.pending']).toMatchObject({ run_id: fired.body.id, title: 'Which greeting?' });
  expect(announced['tool_approval.pending']).toMatchObject({
    tool_approval_id: approval.id,
    title: 'Write: hello.txt',
    plan_id: plan.id,
  });
  // It links the call's own page, where the person allows or denies it.
  expect(announced['tool_approval.pending'].links.tool_approval).toMatch(
    new RegExp(`/ui/tool-approvals/${approval.id}$`),
  );
  expect(announced['plan.executed']).toMatchObject({
    plan_id: plan.id,
    run_id: exec.id,
    branch: `drydock/${plan.id}`,
    commit: expect.stringMatching(/^[0-9a-f]{40}$/),
  });

  // The API agrees: all five delivered; those that met the failing receiver took more than one attempt.
  const list = await waitFor(async () => {
    const r = await second.api('GET', '/v1/notifications', undefined, alice);
    return r.body.items.length === 5 && r.body.items.every((n: any) => n.status === 'delivered')
      ? (r.body.items as any[])
      : undefined;
  });
  expect(list.reduce((sum, n) => sum + n.attempts, 0)).toBeGreaterThanOrEqual(5 + 3);
  expect(list.some((n) => n.attempts > 1 && n.last_error === 'HTTP 503')).toBe(true);
  expect(JSON.stringify(list)).not.toContain(SECRET);
  second.child.kill('SIGTERM');
}, 240_000);
