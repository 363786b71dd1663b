import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { postgresAvailable } from '../support/postgres.js';
import { type DaemonProcess, serveProcess } from '../support/process-daemon.js';
import { settledAnswer } from '../support/webhook-deliveries.js';

// Two replicas on one PostgreSQL database, both reporting to GitHub: each event is reported once, by the
// replica that holds the reaction's cursor, whichever replica the run and the decision happened on.

const GITHUB_TOKEN = 'ghp_FAKEreplicas0123456789abcdefghijklmn';
const SECRET = 'webhook-secret-for-the-replicas-test-01';
const REPO = 'acme/widgets';
const up = await postgresAvailable('GitHub reports from two replicas');

let model: ModelServer | undefined;
let github: FakeGithub | undefined;
const children: ChildProcess[] = [];
const daemons: DaemonProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  // The second replica first: the first one made the database and drops it.
  for (const d of daemons.splice(0).reverse()) await d.close();
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
  await github?.close();
  await model?.close();
});

it.skipIf(!up)(
  'a plan proposed on one replica and approved on the other: one comment, one pending and one success status',
  async () => {
    model = await startModelServer();
    github = await startFakeGithub({ token: GITHUB_TOKEN });
    const tmp = tempDir('drydock-report-replicas-');
    dirs.push(tmp);
    const clone = join(tmp.path, 'clone');
    const head = makeRepo(clone, { 'README.md': '# widgets\n' });
    const configFile = join(tmp.path, 'drydock.yaml');
    writeFileSync(
      configFile,
      `github:
  token: ${GITHUB_TOKEN}
  api_url: ${github.url}
  report: true
  webhook_secrets: [${SECRET}]
  repositories:
    ${REPO}: { path: ${clone} }
`,
    );
    const env = { DRYDOCK_CONFIG: configFile, DRYDOCK_WORK_DIR: join(tmp.path, 'shared') };
    const a = await serveProcess(
      join(tmp.path, 'a'),
      model.url,
      children,
      {
        ...env,
        DRYDOCK_REPLICA_ID: 'a',
      },
      { store: 'postgres' },
    );
    daemons.push(a);
    const b = await serveProcess(
      join(tmp.path, 'b'),
      model.url,
      children,
      {
        ...env,
        DRYDOCK_REPLICA_ID: 'b',
      },
      { store: a.database! },
    );
    daemons.push(b);

    const trigger = await a.api('POST', '/v1/triggers', {
      kind: 'github',
      name: 'review',
      events: ['pull_request.opened'],
      prompt: 'Review {{repository}}#{{number}}',
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
    model.enqueue({
      kind: 'message',
      content: [{ type: 'tool_use', id: 'p1', name: 'ExitPlanMode', input: { plan: '## Plan\n\n1. one\n' } }],
    });
    const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
    const payload = structuredClone(def.examples.find((e: any) => e.action === 'opened'));
    payload.repository.full_name = REPO;
    payload.number = 3;
    payload.pull_request.number = 3;
    payload.pull_request.head.sha = head;
    github.setPullRequest(REPO, 3, payload.pull_request);
    const body = JSON.stringify(payload);
    const res = await fetch(`${a.url}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': await new Webhooks({ secret: SECRET }).sign(body),
      },
      body,
    });
    expect((await settledAnswer(a.api, res.status, await res.json())).outcome).toBe('accepted');

    await github.waitFor(() => github!.statuses(head)[0], 20_000, 'the pending status');
    const plan = await waitFor(
      async () => (await b.api('GET', '/v1/plans?status=pending_approval')).body.items[0],
      10_000,
      'the plan',
    );
    const approved = await b.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await github.waitFor(
      () => github!.statuses(head).some((s) => s.state === 'success'),
      20_000,
      'the success status',
    );
    // Both replicas were woken by every event; one reported each.
    expect(github.comments(REPO, 3)).toHaveLength(1);
    expect(github.statuses(head).map((s) => s.state)).toEqual(['pending', 'success']);
    const posts = github.calls.filter((c) => c.method === 'POST').map((c) => c.path);
    expect(posts).toEqual([
      `/repos/${REPO}/issues/3/comments`,
      `/repos/${REPO}/statuses/${head}`,
      `/repos/${REPO}/statuses/${head}`,
    ]);
  },
  90_000,
);
