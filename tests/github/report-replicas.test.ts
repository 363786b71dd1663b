import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../support/daemon.js';
import { type GithubWorld, githubWorld, REPOSITORY as REPO } from '../support/github-world.js';
import { postgresAvailable } from '../support/postgres.js';
import { proposes } from '../triggers/helpers.js';

// Two replicas on one PostgreSQL database, both reporting to GitHub: each event is reported once, by the
// replica that holds the reaction's cursor, whichever replica the run and the decision happened on.

const up = await postgresAvailable('GitHub reports from two replicas');

let w: GithubWorld | undefined;

afterEach(async () => {
  await w?.close();
  w = undefined;
});

it.skipIf(!up)(
  'a plan proposed on one replica and approved on the other: one comment, one pending and one success status',
  async () => {
    const world = await githubWorld({ name: 'report-replicas' });
    w = world;
    const { github, model, head } = world;
    const shared = { DRYDOCK_WORK_DIR: join(world.dir, 'shared') };
    const a = await world.serve({
      data: 'a',
      store: 'postgres',
      env: { ...shared, DRYDOCK_REPLICA_ID: 'a' },
    });
    const b = await world.serve({
      data: 'b',
      store: a.database!,
      env: { ...shared, DRYDOCK_REPLICA_ID: 'b' },
    });

    const trigger = await a.api('POST', '/v1/triggers', {
      kind: 'github',
      name: 'review',
      events: ['pull_request.opened'],
      prompt: 'Review {{repository}}#{{number}}',
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
    model.enqueue(proposes('## Plan\n\n1. one\n', 'p1'));
    await world.openPullRequest(a, 3, head);

    await github.waitFor(() => github.statuses(head)[0], 20_000, 'the pending status');
    const plan = await waitFor(
      async () => (await b.api('GET', '/v1/plans?status=pending_approval')).body.items[0],
      10_000,
      'the plan',
    );
    const approved = await b.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await github.waitFor(
      () => github.statuses(head).some((s) => s.state === 'success'),
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
