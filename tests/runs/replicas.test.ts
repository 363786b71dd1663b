import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/store.js';
import { calls, jobIn, proposes, runUntil, says, tokenIn } from '../plans/helpers.js';
import { ADMIN_TOKEN, readSse, waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, type ScriptedResponse, startModelServer } from '../support/model-server.js';
import { postgresAvailable, withClient } from '../support/postgres.js';
import { type DaemonProcess, serveProcess } from '../support/process-daemon.js';

// Several `drydock serve` processes on one PostgreSQL database (README, Running several replicas): runs are
// claimed with a lease, taken over when their replica dies, parked runs belong to no replica, and a run's
// event stream on one replica follows a run another replica executes.

const postgres = await postgresAvailable('replicas on PostgreSQL');

/** Short leases, so a takeover comes within seconds: renewed every second, lapsed after three. */
const LEASE_MS = 3_000;

let model: ModelServer;
const children: ChildProcess[] = [];
const daemons: DaemonProcess[] = [];
const stores: Store[] = [];
const dirs: { remove(): void }[] = [];

beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  // The first one made the database and drops it: it goes last.
  for (const d of daemons.splice(0).reverse()) await d.close();
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
  await model.close();
});

interface Cluster {
  a: DaemonProcess;
  b: DaemonProcess;
  store: Store;
  repo: string;
  root: string;
  env: Record<string, string>;
  /** The replica holding a running run's claim, and the other one. */
  holder(runId: string): Promise<{ holder: DaemonProcess; other: DaemonProcess }>;
  /** Starts a replica again on its data directory (after a kill). */
  restart(name: 'a' | 'b'): Promise<DaemonProcess>;
}

/** Two replicas `a` and `b` on one fresh database, sharing a work directory, each its own data_dir. */
async function cluster(leaseMs = LEASE_MS): Promise<Cluster> {
  const tmp = tempDir('drydock-replicas-');
  dirs.push(tmp);
  const root = tmp.path;
  const repo = join(root, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  const config = join(root, 'drydock.yaml');
  writeFileSync(config, `runs:\n  lease_ms: ${leaseMs}\n`);
  const env = { DRYDOCK_CONFIG: config, DRYDOCK_WORK_DIR: join(root, 'shared') };
  const a = await serveProcess(
    join(root, 'a'),
    model.url,
    children,
    { ...env, DRYDOCK_REPLICA_ID: 'a' },
    {
      store: 'postgres',
    },
  );
  daemons.push(a);
  const b = await serveProcess(
    join(root, 'b'),
    model.url,
    children,
    { ...env, DRYDOCK_REPLICA_ID: 'b' },
    {
      store: a.database!,
    },
  );
  daemons.push(b);
  const store = await openPostgresStore({ url: a.database!.url, migrate: false });
  stores.push(store);
  const c: Cluster = {
    a,
    b,
    store,
    repo,
    root,
    env,
    async holder(runId) {
      const name = await waitFor(
        () =>
          withClient(a.database!.url, async (client) => {
            const r = await client.query('SELECT claimed_by FROM runs WHERE id = $1 AND status = $2', [
              runId,
              'running',
            ]);
            return (r.rows[0]?.claimed_by as string | null | undefined) ?? undefined;
          }),
        10_000,
        `a replica to claim ${runId}`,
      );
      return name === 'a' ? { holder: c.a, other: c.b } : { holder: c.b, other: c.a };
    },
    async restart(name) {
      const d = await serveProcess(
        join(root, name),
        model.url,
        children,
        { ...env, DRYDOCK_REPLICA_ID: name },
        { store: a.database! },
      );
      daemons.unshift(d); // closed before the maker
      c[name] = d;
      return d;
    },
  };
  return c;
}

/**
 * Freezes the replica holding `runId` (it renews its claim no more) and answers when its lease runs out, as
 * stored: a takeover by the other replica cannot come before then.
 */
async function frozenLease(c: Cluster, holder: DaemonProcess, runId: string): Promise<number> {
  await holder.pause();
  const name = holder === c.a ? 'a' : 'b';
  return withClient(holder.database!.url, async (client) => {
    const r = await client.query('SELECT lease_until FROM runs WHERE id = $1 AND claimed_by = $2', [
      runId,
      name,
    ]);
    expect(r.rows, `${runId} still claimed by ${name} once it froze`).toHaveLength(1);
    return Number(r.rows[0].lease_until);
  });
}

/** A scripted response that waits until `release()` is called: the model "thinks" as long as the test likes. */
function gated(then: ScriptedResponse): { response: ScriptedResponse; release(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { response: async () => opened.then(() => then), release: () => open() };
}

/** Fires the session's job on `d`; the run's id. */
async function fire(d: DaemonProcess, jobId: string): Promise<string> {
  const fired = await d.api('POST', `/v1/jobs/${jobId}/run`);
  expect(fired.status, JSON.stringify(fired.body)).toBe(201);
  return fired.body.id;
}

describe.skipIf(!postgres)('several replicas on one database', () => {
  it('an event stream on one replica follows, live and in order, a run the other executes', async () => {
    const c = await cluster();
    // Each says who it is.
    expect((await c.a.api('GET', '/readyz')).body).toMatchObject({ status: 'ready', replica: 'a' });
    expect((await c.b.api('GET', '/readyz')).body).toMatchObject({ status: 'ready', replica: 'b' });
    const { jobId } = await jobIn(c.a, c.repo, {}, 'Add a greeting file');
    const slow = gated(proposes());
    model.enqueue(calls('r1', 'Read', { file_path: 'README.md' }), slow.response);
    const runId = await fire(c.a, jobId);
    const { holder, other } = await c.holder(runId);
    await model.waitForRequests(2);
    // The stream opens on the replica that does not execute the run, before the run ends.
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const streamed = readSse(`${other.url}/v1/runs/${runId}/events`, ADMIN_TOKEN, undefined, 20_000, open);
    await Promise.race([opened, streamed]);
    slow.release();
    const events = await streamed;
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', data: { status: 'planned' } });
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    const stored = await c.store.listEvents(runId, 0, 1_000);
    expect(events.map((e) => e.event)).toEqual(stored.map((e) => e.type));
    expect(events.map((e) => e.event)).toContain('plan_proposed');
    // A run that ended as it should was never taken for lost by its own replica's renewals.
    for (const d of [holder, other]) expect(d.stdout() + d.stderr()).not.toContain('no longer holds');
    // Last-Event-ID replays exactly what came after it, on either replica.
    const middle = Math.floor(events.length / 2);
    for (const d of [other, holder]) {
      const replayed = await readSse(`${d.url}/v1/runs/${runId}/events`, ADMIN_TOKEN, String(middle));
      expect(replayed.map((e) => e.id)).toEqual(events.slice(middle).map((e) => e.id));
    }
  }, 120_000);

  it('a plan-phase run whose replica is killed is taken over by the other, from its stored conversation', async () => {
    const c = await cluster();
    const { jobId } = await jobIn(c.a, c.repo, {}, 'Add a greeting file');
    model.enqueue(calls('r1', 'Read', { file_path: 'README.md' }), { kind: 'hang' }, proposes());
    const runId = await fire(c.a, jobId);
    const { holder, other } = await c.holder(runId);
    await model.waitForRequests(2);
    const lapses = await frozenLease(c, holder, runId);
    await holder.kill();
    const done = await runUntil(other, runId, ['planned', 'failed', 'interrupted'], 30_000);
    expect(done.status, done.error).toBe('planned');
    expect(done.attempt).toBe(2);
    // Not before the dead replica's lease ran out: the other one waited for it to lapse.
    const takeover = (await c.store.listEvents(runId, 0, 1_000)).find((e) => e.type === 'run_interrupted');
    expect(takeover!.at).toBeGreaterThanOrEqual(lapses);
    // It went on from the stored conversation: the third request carries the Read and its result.
    const third = model.requests.filter((r) => r.path === '/v1/messages')[2]!.body;
    expect(JSON.stringify(third.messages)).toContain('r1');
    const types = (await c.store.listEvents(runId, 0, 1_000)).map((e) => e.type);
    expect(types).toContain('run_interrupted');
    expect(types.filter((t) => t === 'run_finished')).toHaveLength(1);
  }, 120_000);

  it('an execution whose replica is killed starts over from the approved plan in a fresh worktree', async () => {
    const c = await cluster();
    const { jobId } = await jobIn(c.a, c.repo, { execute_mode: 'edits' }, 'Add a greeting file');
    const alice = await tokenIn(c.store, 'alice');
    model.enqueue(proposes());
    const planRun = await fire(c.a, jobId);
    const plannedRun = await runUntil(c.a, planRun, ['planned', 'failed'], 15_000);
    const plan = (await c.a.api('GET', `/v1/plans/${plannedRun.plan_id}`)).body;
    // The first attempt writes half.txt, then the model hangs.
    model.enqueue(calls('w1', 'Write', { file_path: 'half.txt', content: 'half\n' }), { kind: 'hang' });
    const approved = await c.b.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const exec = approved.body.run.id as string;
    const { holder, other } = await c.holder(exec);
    const worktree = join(c.root, 'shared', 'worktrees', plan.id);
    await waitFor(async () => existsSync(join(worktree, 'half.txt')), 10_000, 'the first attempt to write');
    // The plan's request, then the execution's two: the second one hangs.
    await model.waitForRequests(3);
    const before = model.requests.length;
    // The second attempt: a new conversation that opens with the approved plan.
    model.enqueue(calls('w2', 'Write', { file_path: 'hello.txt', content: 'hello\n' }), says('done'));
    await holder.kill();
    const done = await runUntil(other, exec, ['completed', 'failed', 'interrupted'], 30_000);
    expect(done.status, done.error).toBe('completed');
    expect(done.attempt).toBe(2);
    const restart = model.requests.slice(before).find((r) => r.path === '/v1/messages')!.body;
    expect(restart.messages).toHaveLength(1);
    expect(JSON.stringify(restart.messages[0])).toContain(plan.sha256);
    // Nothing of the first attempt's files: the commit holds the second attempt's work only.
    const files = git(c.repo, 'show', '--name-only', '--format=', `drydock/${plan.id}`).split('\n');
    expect(files).toEqual(['hello.txt']);
    expect(existsSync(join(worktree, 'half.txt'))).toBe(false);
  }, 120_000);

  it('a parked run belongs to no replica: approved on the other one after its replica died, it goes on', async () => {
    const c = await cluster();
    const { jobId } = await jobIn(c.a, c.repo, { execute_mode: 'manual' }, 'Add a greeting file');
    const alice = await tokenIn(c.store, 'alice');
    model.enqueue(proposes());
    const plannedRun = await runUntil(c.a, await fire(c.a, jobId), ['planned', 'failed'], 15_000);
    const plan = (await c.a.api('GET', `/v1/plans/${plannedRun.plan_id}`)).body;
    model.enqueue(calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }), says('done'));
    const approved = await c.a.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    const exec = approved.body.run.id as string;
    const parked = await runUntil(c.a, exec, ['awaiting_input', 'failed'], 15_000);
    expect(parked.status).toBe('awaiting_input');
    // Whichever replica parked it, both go away but one, which never saw this run before.
    await c.a.kill();
    const pending = (await c.b.api('GET', `/v1/tool-approvals?status=pending&run_id=${exec}`)).body.items;
    expect(pending).toHaveLength(1);
    const decided = await c.b.api(
      'POST',
      `/v1/tool-approvals/${pending[0].id}`,
      { decision: 'allow' },
      alice,
    );
    expect(decided.status).toBe(200);
    const done = await runUntil(c.b, exec, ['completed', 'failed'], 15_000);
    expect(done.status, done.error).toBe('completed');
    expect(done.attempt).toBe(1);
    expect(git(c.repo, 'show', `drydock/${plan.id}:a.txt`)).toBe('A');
  }, 120_000);

  it('a run canceled on one replica stops on the replica executing it', async () => {
    const c = await cluster();
    const { jobId } = await jobIn(c.a, c.repo, {}, 'Add a greeting file');
    model.enqueue({ kind: 'hang' });
    const runId = await fire(c.a, jobId);
    const { other } = await c.holder(runId);
    await model.waitForRequests(1);
    const canceled = await other.api('POST', `/v1/runs/${runId}/cancel`);
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    const run = await runUntil(other, runId, ['canceled'], 5_000);
    expect(run.status).toBe('canceled');
    // The executing replica lets go of its model request soon after (it finds its claim gone).
    await waitFor(async () => model.requests[0]!.clientAborted, 5_000, 'the hanging request to be dropped');
    const types = (await c.store.listEvents(runId, 0, 1_000)).map((e) => e.type);
    expect(types.filter((t) => t === 'run_finished')).toHaveLength(1);
  }, 120_000);

  it('one run at a time per session across replicas; a replica restarted takes its own runs back at once', async () => {
    // A long lease: a takeover by the other replica could not come before the test ends, however loaded the
    // machine (the restarted replica takes its own run back at its start, whatever the lease).
    const c = await cluster(90_000);
    const { jobId } = await jobIn(c.a, c.repo, {}, 'Add a greeting file');
    model.enqueue({ kind: 'hang' });
    const first = await fire(c.a, jobId);
    const second = await fire(c.b, jobId);
    const { holder } = await c.holder(first);
    await model.waitForRequests(1);
    // However long both replicas look, the second run of the session waits.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await c.store.getRun(second))!.status).toBe('queued');
    expect(model.requests).toHaveLength(1);
    // The holder dies and comes back under its own name long before its lease ran out: it takes the run
    // back at its start, from the stored conversation.
    const name = holder === c.a ? 'a' : 'b';
    model.enqueue(proposes('p1'), proposes('p2'));
    const lapses = await frozenLease(c, holder, first);
    await holder.kill();
    const back = await c.restart(name);
    const done = await runUntil(back, first, ['planned', 'failed'], 15_000);
    expect(done.status, done.error).toBe('planned');
    expect(done.attempt).toBe(2);
    // Taken back before the dead process's lease ran out: by the replica's restart, not by a lapse.
    const resumed = (await c.store.listEvents(first, 0, 1_000)).find((e) => e.type === 'run_interrupted');
    expect(resumed!.at).toBeLessThan(lapses);
    const next = await runUntil(back, second, ['planned', 'failed'], 15_000);
    expect(next.status, next.error).toBe('planned');
    // Never both at once: each run's last start came after the other's end, or its end before the other's
    // last start.
    // A run's receipt is written in the transaction that ends it: the moment its status says planned, its
    // log holds run_finished.
    const span = async (id: string) => {
      const events = await c.store.listEvents(id, 0, 1_000);
      const start = events.filter((e) => e.type === 'run_started' || e.type === 'run_resumed').at(-1)!;
      const end = events.find((e) => e.type === 'run_finished');
      expect(end, `run_finished of ${id}, read as soon as the run said planned`).toBeDefined();
      return [start.at, end!.at] as const;
    };
    const [[s1, e1], [s2, e2]] = [await span(first), await span(second)];
    expect(s2 >= e1 || s1 >= e2, `run spans ${s1}-${e1} and ${s2}-${e2} overlap`).toBe(true);
  }, 120_000);
});
