import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NETWORK_DOMAINS, normalizedDomains } from '../../src/domain/network.js';
import type { CronJob, Plan } from '../../src/domain/types.js';
import { PgDb } from '../../src/store/postgres/db.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { loadPostgresMigrations, migrate } from '../../src/store/postgres/migrate.js';
import { type DecideFn, type NewJob, SchemaTooNewError, type SlotTransition } from '../../src/store/store.js';
import { type FreshDatabase, freshDatabase, postgresAvailable } from '../support/postgres.js';
import { givenPlan, jobInput, MINUTE, planInput, runInput, sessionInput, T0 } from './contract/fixtures.js';

// What only the PostgreSQL store has to get right, beyond the Store contract (postgres.test.ts): migrating
// from several processes at once, two stores (two replicas) racing on one database without doubling a slot,
// an execution or a fire and without deadlocks, the event log's order, prepared statements after another
// process migrated, connections cut under it; and a pass over each aggregate. Each test gets a database of
// its own: empty for the migration tests, else a copy of one migrated template.

const SUITE = 'PostgreSQL store (races, migrations, connections)';

const up = await postgresAvailable(SUITE);

let template: FreshDatabase | null = null;
const databases: FreshDatabase[] = [];
const stores: PostgresStore[] = [];

/** A database of this test's, empty (`empty`) or migrated; dropped after the test. */
async function database(empty = false): Promise<string> {
  const db = await freshDatabase(empty ? {} : { template: template!.name });
  databases.push(db);
  return db.url;
}

/** Runs one statement on the database at `url`, on a connection of its own. */
async function onDatabase(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function open(url: string, over: Partial<Parameters<typeof openPostgresStore>[0]> = {}) {
  const store = await openPostgresStore({ url, now: () => T0, ...over });
  stores.push(store);
  return store;
}

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const db of databases.splice(0)) await db.drop();
});

const session = (id: string) => sessionInput(id);

/** A job whose next slot is T0, due at T0. */
const job = (id: string, sessionId: string, over: Partial<NewJob> = {}): NewJob =>
  jobInput(id, sessionId, { prompt: 'review the repository', nextNominalAt: T0, nextDueAt: T0, ...over });

/** Fires the job's next slot and plans the one a day later. */
const fireNext: DecideFn = (j: CronJob): SlotTransition | null =>
  j.nextNominalAt === null
    ? null
    : {
        coalesce: [],
        missed: null,
        fire: { slotAt: j.nextNominalAt, runId: `run_${j.id}_${j.nextNominalAt}`, dueAt: j.nextDueAt },
        pending: null,
        next: {
          nominalAt: j.nextNominalAt + 24 * 60 * MINUTE,
          dueAt: j.nextDueAt! + 24 * 60 * MINUTE,
          final: false,
        },
        remove: false,
      };

const plan = (id: string, runId: string, over: Partial<Plan> = {}): Plan =>
  planInput(
    id,
    { id: runId, sessionId: over.sessionId ?? 'ses_a' },
    { markdown: '# Plan\n\nChange the README.', sha256: 'a'.repeat(64), ...over },
  );

describe.skipIf(!up)('PostgreSQL store', () => {
  beforeAll(async () => {
    template = await freshDatabase();
    // No session may stay on a template while it is copied.
    await (await openPostgresStore({ url: template.url, now: () => T0 })).close();
  });
  afterAll(async () => {
    await template?.drop();
  });

  describe('migrations', () => {
    it('migrates an empty database once, also when several processes start at the same moment', async () => {
      const url = await database(true);
      const migrations = loadPostgresMigrations();
      const dbs = Array.from({ length: 4 }, () => new PgDb({ url }));
      try {
        const applied = await Promise.all(dbs.map((db) => migrate(db, migrations, T0)));
        // Exactly one of them applied everything; the others waited for its lock and found nothing to do.
        expect(applied.filter((a) => a.length > 0)).toEqual([migrations.map((m) => m.version)]);
        const rows = await dbs[0]!.rows<{ version: number }>(
          'SELECT version FROM schema_migrations ORDER BY 1',
        );
        expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      } finally {
        for (const db of dbs) await db.close();
      }
      const store = await open(url);
      expect(await store.schemaVersion()).toEqual({ current: migrations.length, latest: migrations.length });
    });

    it('refuses a schema newer than this build', async () => {
      const url = await database(true);
      const store = await open(url);
      const db = new PgDb({ url });
      try {
        await db.exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)`);
      } finally {
        await db.close();
      }
      await expect(openPostgresStore({ url, now: () => T0 })).rejects.toBeInstanceOf(SchemaTooNewError);
      expect((await store.schemaVersion()).current).toBe(99);
    });

    it('opens without migrating when asked, and migrates on request', async () => {
      const url = await database(true);
      const store = await open(url, { migrate: false });
      expect(await store.schemaVersion()).toEqual({ current: 0, latest: loadPostgresMigrations().length });
      expect(await store.migrateNow(T0)).toEqual(loadPostgresMigrations().map((m) => m.version));
      expect(await store.migrateNow(T0)).toEqual([]);
    });
  });

  it('goes on reading a table another process added a column to (a newer replica migrated)', async () => {
    const url = await database();
    const store = await open(url, { poolSize: 3 });
    await store.createSession(session('ses_a'));
    // Every connection of the pool prepares the statement.
    await Promise.all(Array.from({ length: 6 }, () => store.getSession('ses_a')));
    const other = new PgDb({ url });
    try {
      await other.exec('ALTER TABLE sessions ADD COLUMN added_later text');
    } finally {
      await other.close();
    }
    await Promise.all(
      Array.from({ length: 6 }, async () => expect(await store.getSession('ses_a')).not.toBeNull()),
    );
    expect(await store.closeSession('ses_a', T0)).toMatchObject({ session: { status: 'closed' } });
  });

  it('survives its connections being cut, idle or inside a transaction', async () => {
    const url = await database();
    const lost: Error[] = [];
    const store = await open(url, { onConnectionError: (err) => lost.push(err) });
    await store.createSession(session('ses_a'));
    const db = new PgDb({ url, onConnectionError: (err) => lost.push(err) });
    const cut = () =>
      onDatabase(
        url,
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
    try {
      // A transaction whose connection is cut between two statements fails; nothing else does.
      const inFlight = db.tx(async (q) => {
        await q.value('SELECT 1');
        await cut();
        await new Promise((r) => setTimeout(r, 200));
        return q.value('SELECT 2');
      });
      await expect(inFlight).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 200));
      // The idle connections were cut too: the pools make new ones.
      expect(await db.value<number>('SELECT 3')).toBe(3);
      expect((await store.getSession('ses_a'))!.id).toBe('ses_a');
      expect(lost.length).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
  });

  describe('two stores on one database', () => {
    it('never fire one slot twice: the scheduler passes skip jobs the other holds', async () => {
      const url = await database();
      const a = await open(url);
      const b = await open(url);
      await a.createSession(session('ses_a'));
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        // One session per few jobs, so that passes also meet on sessions.
        if (i % 4 === 0) await a.createSession(session(`ses_${i}`));
        await a.createJob(job(`job_${i}`, `ses_${i - (i % 4)}`), 50);
        ids.push(`job_${i}`);
      }
      const passes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).advanceJobs(ids, T0, fireNext)),
      );
      const fired = passes.flat().filter((r) => r.run);
      // Each pass read each job it could lock at its freshest: a slot a pass fired is gone for the next one.
      expect(new Set(fired.map((r) => r.run!.id)).size).toBe(fired.length);
      for (const id of ids) {
        const slots = await a.listSlots(id);
        expect(slots.filter((s) => s.slotAt === T0)).toHaveLength(1);
      }
    });

    it('schedules, closes sessions and creates jobs at once without a deadlock', async () => {
      const url = await database();
      const a = await open(url);
      const b = await open(url);
      const ids: string[] = [];
      for (let s = 0; s < 16; s++) {
        await a.createSession(session(`ses_${s}`));
        for (let j = 0; j < 3; j++) {
          await a.createJob(job(`job_${s}_${j}`, `ses_${s}`), 50);
          ids.push(`job_${s}_${j}`);
        }
      }
      const reversed = [...ids].reverse();
      const work: Promise<unknown>[] = [];
      for (let round = 0; round < 8; round++) {
        work.push(a.advanceJobs(ids, T0, fireNext), b.advanceJobs(reversed, T0, fireNext));
        work.push((round % 2 ? a : b).closeSession(`ses_${round * 2}`, T0));
        work.push(
          (round % 2 ? b : a)
            .createJob(job(`job_new_${round}`, `ses_${round * 2}`), 50)
            .catch((err: Error) => {
              // The session closed first: refused, as it should be.
              expect(err).toMatchObject({ code: 'conflict' });
            }),
        );
      }
      await Promise.all(work);
      for (const id of ids)
        expect((await a.listSlots(id)).filter((s) => s.slotAt === T0).length).toBeLessThan(2);
      // Deadlocks would have been broken by PostgreSQL and retried by the store: none happened at all. A
      // backend's statistics reach pg_stat_database by the time it exits, so the stores are closed first.
      await a.close();
      await b.close();
      const db = new PgDb({ url });
      try {
        let deadlocks: number | undefined;
        for (let i = 0; i < 20 && deadlocks === undefined; i++) {
          await new Promise((r) => setTimeout(r, 100));
          await db.exec('SELECT pg_stat_clear_snapshot()');
          const alive = await db.value<number>(
            `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
          );
          if (alive === 0) {
            deadlocks = await db.value<number>(
              'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
            );
          }
        }
        expect(deadlocks).toBe(0);
      } finally {
        await db.close();
      }
    });

    it('turns 50 concurrent approvals of one plan into one execute run', async () => {
      const url = await database();
      const a = await open(url);
      const b = await open(url);
      await a.createSession(session('ses_a'));
      await a.createRun({
        id: 'run_p',
        sessionId: 'ses_a',
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt: 'p',
        requestedBy: 'alice',
        createdAt: T0,
      });
      await a.createPlan(plan('pln_1', 'run_p', { approvalsRequired: 2 }));
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? a : b).decidePlan('pln_1', (p, decisions) => {
            const identity = `approver_${i}`;
            if (p.status !== 'pending_approval') throw new Error(`plan is ${p.status}`);
            const approvals = decisions.filter((d) => d.kind === 'approve').length + 1;
            const done = approvals >= p.approvalsRequired;
            return {
              decision: {
                id: `dec_${i}`,
                planId: p.id,
                kind: 'approve',
                identity,
                comment: null,
                sha256: p.sha256,
                createdAt: T0 + i,
              },
              ...(done
                ? {
                    planStatus: 'approved' as const,
                    run: {
                      id: `run_exec_${i}`,
                      sessionId: p.sessionId,
                      jobId: null,
                      slotAt: null,
                      source: 'manual' as const,
                      prompt: 'execute',
                      requestedBy: identity,
                      createdAt: T0 + i,
                      phase: 'execute' as const,
                      executesPlanId: p.id,
                    },
                  }
                : {}),
            };
          }),
        ),
      );
      const made = results.flatMap((r) => (r.status === 'fulfilled' && r.value.run ? [r.value.run] : []));
      expect(made).toHaveLength(1);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      const p = await a.getPlan('pln_1');
      expect(p).toMatchObject({ status: 'approved', approvals: 2 });
      expect((await a.listPlanRuns(p!)).filter((r) => r.phase === 'execute')).toHaveLength(1);
    });

    it('keeps a trigger under its hourly cap when two stores fire it at once', async () => {
      const url = await database();
      const a = await open(url);
      const b = await open(url);
      const fires = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).fireTrigger({
            triggerId: 'trg_1',
            deliveryId: `dlv_${i}`,
            hourlyCap: 5,
            now: T0 + i,
            session: {
              name: 'PR 1',
              workspace: '/srv/repo',
              owner: 'alice',
              defaults: {},
              scopeKey: 'pr:o/r#1',
            },
            run: {
              id: `run_f${i}`,
              jobId: null,
              slotAt: null,
              source: 'delivery',
              prompt: 'review',
              requestedBy: 'github',
              createdAt: T0 + i,
              triggerId: 'trg_1',
              deliveryId: `dlv_${i}`,
              subject: 'o/r#1',
            },
          }),
        ),
      );
      expect(fires.filter((f) => f.outcome === 'accepted')).toHaveLength(5);
      // One session for the subject, made by the first fire.
      const sessions = new Set(fires.flatMap((f) => (f.run ? [f.run.sessionId] : [])));
      expect(sessions.size).toBe(1);
    });

    it('lets one claim of a webhook delivery win', async () => {
      const url = await database();
      const a = await open(url);
      const b = await open(url);
      await a.recordWebhookDelivery(
        {
          id: 'dlv_1',
          source: 'github',
          key: 'gh-1',
          event: 'pull_request.opened',
          triggerId: null,
          outcome: 'queued',
          detail: null,
          subject: null,
          runIds: [],
          receivedAt: T0,
          processedAt: null,
        },
        '{"action":"opened"}',
      );
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).claimWebhookDelivery('dlv_1', T0 + MINUTE, T0)),
      );
      expect(claims.filter((c) => c !== null)).toEqual(['{"action":"opened"}']);
      expect(await a.queuedWebhookDeliveries(10, T0)).toEqual([]);
      expect((await a.queuedWebhookDeliveries(10, T0 + MINUTE)).map((d) => d.id)).toEqual(['dlv_1']);
    });
  });

  describe('the event log', () => {
    it('numbers each run from 1 and the whole log in the order appends become visible', async () => {
      const url = await database();
      const a = await open(url);
      const b = await open(url);
      await a.createSession(session('ses_a'));
      for (const id of ['run_1', 'run_2']) {
        await a.createRun({
          id,
          sessionId: 'ses_a',
          jobId: null,
          slotAt: null,
          source: 'manual',
          prompt: 'p',
          requestedBy: 'alice',
          createdAt: T0,
        });
      }
      await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          (i % 2 ? a : b).appendEvent(
            i % 3 ? 'run_1' : 'run_2',
            i % 5 ? 'turn' : 'plan.proposed',
            { i },
            T0 + i,
          ),
        ),
      );
      const seqs = (await a.listEvents('run_1', 0, 100)).map((e) => e.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      const end = await a.eventLogEnd();
      const all = await a.eventsAfter(0, ['turn', 'plan.proposed'], 1000);
      expect(all.end).toBe(end);
      expect(all.events).toHaveLength(60);
      expect(all.events.map((e) => e.rowid)).toEqual(
        [...all.events.map((e) => e.rowid)].sort((x, y) => x - y),
      );
      const some = await a.eventsAfter(all.events[9]!.rowid, ['plan.proposed'], 3);
      expect(some.events.map((e) => e.type)).toEqual(['plan.proposed', 'plan.proposed', 'plan.proposed']);
      expect(some.events[0]!.rowid).toBeGreaterThan(all.events[9]!.rowid);
      expect(await a.eventsAfter(end, ['turn'], 10)).toEqual({ events: [], end });
    });
  });

  describe('each aggregate', () => {
    it('sessions, jobs and slots', async () => {
      const store = await open(await database());
      await store.createSession(session('ses_a'));
      const created = await store.createJob(job('job_1', 'ses_a'), 2);
      expect(created).toMatchObject({ id: 'job_1', recurring: true, approximate: true, nextFinal: false });
      await store.createJob(job('job_2', 'ses_a'), 2);
      await expect(store.createJob(job('job_3', 'ses_a'), 2)).rejects.toMatchObject({ code: 'conflict' });
      expect(await store.listDueJobIds(T0, 10)).toEqual(['job_1', 'job_2']);
      expect(await store.earliestDueAt()).toBe(T0);
      const [r1] = await store.advanceJobs(['job_1'], T0, fireNext);
      expect(r1!.run).toMatchObject({ jobId: 'job_1', slotAt: T0, status: 'queued', overrides: {} });
      // The session is busy now: the second job's decision is told so.
      let busySeen: boolean | undefined;
      await store.advanceJobs(['job_2'], T0, (_job, busy) => {
        busySeen = busy;
        return null;
      });
      expect(busySeen).toBe(true);
      expect(await store.listSlots('job_1')).toMatchObject([
        { slotAt: T0, outcome: 'fired', runId: r1!.run!.id },
      ]);
      expect((await store.getJob('job_1'))!.fireCount).toBe(1);
      const renewed = await store.renewJob('job_1', T0 + 1, 'bob', T0);
      expect(renewed).toMatchObject({ renewals: 1, renewedBy: 'bob', nextFinal: true });
      const page1 = await store.listSessions({ limit: 1 });
      expect(page1.items.map((s) => s.id)).toEqual(['ses_a']);
      const closed = await store.closeSession('ses_a', T0 + 5);
      expect(closed).toMatchObject({ session: { status: 'closed', closedAt: T0 + 5 }, deletedJobs: 2 });
      expect(await store.countJobs()).toBe(0);
    });

    it('runs, conversations and the call journal', async () => {
      const store = await open(await database());
      await store.createSession(session('ses_a'));
      const run = await store.createRun({
        id: 'run_1',
        sessionId: 'ses_a',
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt: 'p',
        requestedBy: 'alice',
        createdAt: T0,
        checkout: {
          repository: 'o/r',
          clone: '/c',
          headSha: 'abc',
          headRef: 'h',
          baseRef: 'main',
          number: 1,
        },
      } as Parameters<typeof store.createRun>[0]);
      expect(run).toMatchObject({ status: 'queued', phase: 'plan', conversationId: 'run_1', activeMs: 0 });
      expect(
        await store.transitionRun('run_1', ['queued'], 'running', { startedAt: T0 + 1, activeMs: 2.4 }),
      ).toBe(true);
      expect(await store.transitionRun('run_1', ['queued'], 'running')).toBe(false);
      await store.updateRun('run_1', {
        usage: { input_tokens: 10, output_tokens: 5 },
        costUsd: 0.25,
        turns: 1,
      });
      expect(await store.getRun('run_1')).toMatchObject({
        startedAt: T0 + 1,
        activeMs: 2,
        costUsd: 0.25,
        turns: 1,
      });
      // Key order and spacing of JSON are kept as written.
      await store.appendMessages(
        'run_1',
        'run_1',
        [{ role: 'user', content: [{ type: 'text', text: 'a' }] }],
        T0,
      );
      await store.appendMessages(
        'run_1',
        'run_1',
        [
          { role: 'user', content: [{ type: 'text', text: 'b' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'c' }], stopReason: 'pause_turn' },
          { role: 'assistant', content: [{ type: 'text', text: 'd' }], stopReason: 'end_turn' },
        ],
        T0,
      );
      expect(await store.loadConversation('run_1')).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
          runId: 'run_1',
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'c' },
            { type: 'text', text: 'd' },
          ],
          runId: 'run_1',
          stopReason: 'end_turn',
        },
      ]);
      const call = {
        runId: 'run_1',
        toolUseId: 'toolu_1',
        tool: 'Bash',
        inputSha256: 'f'.repeat(64),
        startedAt: T0,
      };
      expect((await store.startToolCall(call)).started).toBe(true);
      await store.recordToolCallProcess('run_1', 'toolu_1', 4242, 'boot:1');
      expect(await store.listOpenCommands(10)).toMatchObject([
        { processGroup: 4242, processStart: 'boot:1' },
      ]);
      await store.finishToolCall('run_1', 'toolu_1', { content: 'ok', isError: false }, T0 + 3);
      expect(await store.startToolCall(call)).toMatchObject({
        started: false,
        call: { finishedAt: T0 + 3, result: { content: 'ok', isError: false } },
      });
      // PostgreSQL text cannot hold NUL: written as U+FFFD; inside JSON it is an escape and comes back as is.
      await store.transitionRun('run_1', ['running'], 'failed', {
        error: 'bad\u0000byte',
        finishedAt: T0 + 4,
      });
      expect((await store.getRun('run_1'))!.error).toBe('bad\uFFFDbyte');
      await store.updateRun('run_1', { changedFiles: ['a\u0000b'] });
      expect((await store.getRun('run_1'))!.changedFiles).toEqual(['a\u0000b']);
      const stats = await store.stats();
      expect(stats).toMatchObject({ runsByStatus: { failed: 1 }, costUsd: 0.25 });
      expect(stats.tokens).toMatchObject({ input: 10, output: 5, cache_read: 0 });
    });

    it('plans: the queue, its version and the expiry', async () => {
      const store = await open(await database());
      await store.createSession(session('ses_a'));
      await store.createRun({
        id: 'run_p',
        sessionId: 'ses_a',
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt: 'p',
        requestedBy: 'alice',
        createdAt: T0,
      });
      // A run has one plan pending at most: the second is another run's.
      await store.createRun(runInput('run_p2', 'ses_a'));
      const v0 = await store.plansVersion();
      await store.createPlan(plan('pln_1', 'run_p', { markdown: 'x'.repeat(500) }));
      await store.createPlan(
        plan('pln_2', 'run_p2', { toolUseId: 'toolu_2', createdAt: T0 + 1, expiresAt: T0 + 10 }),
      );
      const v1 = await store.plansVersion();
      expect(v1).toBeGreaterThan(v0);
      const summary = await store.listPlans({ limit: 1, summary: true });
      expect(summary.items[0]!.markdown).toHaveLength(300);
      const next = await store.listPlans({ limit: 1, cursor: summary.nextCursor! });
      expect(next.items.map((p) => p.id)).toEqual(['pln_2']);
      expect(
        (await store.listPlans({ limit: 10, status: 'pending_approval', activeAt: T0 + 20 })).items.map(
          (p) => p.id,
        ),
      ).toEqual(['pln_1']);
      expect(
        (await store.listPlans({ limit: 10, status: 'expired', activeAt: T0 + 20 })).items.map((p) => p.id),
      ).toEqual(['pln_2']);
      expect(await store.expirePlans(T0 + 20)).toEqual(['pln_2']);
      expect(await store.plansVersion()).toBeGreaterThan(v1);
      expect(await store.transitionPlan('pln_1', ['approved'], 'executing')).toBe(false);
      expect(
        await store.transitionPlan('pln_1', ['pending_approval'], 'rejected', { failureReason: null }),
      ).toBe(true);
    });

    it('triggers, deliveries and the outbox', async () => {
      const store = await open(await database());
      const trigger = await store.createTrigger({
        id: 'trg_1',
        name: 'reviews',
        kind: 'generic',
        events: [],
        filters: {},
        prompt: 'review',
        workspace: '/srv/repo',
        options: {},
        hourlyCap: 10,
        limits: {},
        tokenId: 'tok_1',
        tokenHash: Buffer.from('secret'),
        enabled: true,
        createdBy: 'alice',
        createdAt: T0,
        updatedAt: T0,
      });
      expect(trigger).toMatchObject({ enabled: true, tokenHash: Buffer.from('secret') });
      expect((await store.listTriggers({ enabled: true })).map((t) => t.id)).toEqual(['trg_1']);
      expect(await store.updateTrigger('trg_1', { enabled: false, updatedAt: T0 + 1 })).toMatchObject({
        enabled: false,
        name: 'reviews',
      });
      const base = {
        source: 'fire' as const,
        event: 'fire',
        triggerId: 'trg_1',
        outcome: 'queued' as const,
        detail: null,
        subject: null,
        runIds: [],
        receivedAt: T0,
        processedAt: null,
      };
      const recorded = await store.recordWebhookDeliveries([
        { delivery: { ...base, id: 'dlv_1', key: 'k1' }, payload: '{}' },
        { delivery: { ...base, id: 'dlv_2', key: 'k2' } },
        { delivery: { ...base, id: 'dlv_3', key: 'k1' } },
      ]);
      expect(recorded.map((r) => [r.delivery.id, r.duplicate])).toEqual([
        ['dlv_1', false],
        ['dlv_2', false],
        ['dlv_1', true],
      ]);
      expect((await store.listWebhookDeliveries({ limit: 10 })).map((d) => d.id)).toEqual(['dlv_2', 'dlv_1']);
      expect((await store.listWebhookDeliveries({ limit: 10, before: 'dlv_2' })).map((d) => d.id)).toEqual([
        'dlv_1',
      ]);
      expect(await store.listWebhookDeliveries({ limit: 10, before: 'dlv_unknown' })).toEqual([]);
      await store.updateWebhookDelivery('dlv_2', { outcome: 'failed', runIds: ['run_x'] });
      expect(await store.getWebhookDelivery('dlv_2')).toMatchObject({ outcome: 'failed', runIds: ['run_x'] });
      expect(await store.requeueWebhookDelivery('dlv_2', '{"again":1}')).toBe(true);
      await store.recordTriggerFire('trg_1', 'dlv_1', 'filtered', T0);
      expect(await store.listTriggerFires('trg_1', 10)).toMatchObject([{ outcome: 'filtered', runId: null }]);

      expect(await store.notificationCursor()).toBeNull();
      const n = (id: string, rowid: number) => ({
        id,
        eventRowid: rowid,
        webhook: 'wh',
        webhookUrl: 'https://hooks.example',
        event: 'plan.pending',
        runId: 'run_x',
        planId: null,
        data: { b: 1, a: 2 },
        body: '{"b":1,"a":2}',
        nextAttemptAt: T0,
        createdAt: T0,
      });
      expect(await store.enqueueNotifications([n('ntf_1', 1), n('ntf_2', 2), n('ntf_dup', 1)], 7)).toBe(2);
      expect(await store.enqueueNotifications([], 3)).toBe(0);
      expect(await store.notificationCursor()).toBe(7);
      const claimed = await store.claimNotifications(T0, T0 + MINUTE, 10);
      expect(claimed.map((c) => [c.id, c.attempts])).toEqual([
        ['ntf_1', 1],
        ['ntf_2', 1],
      ]);
      expect(await store.claimNotifications(T0, T0 + MINUTE, 10)).toEqual([]);
      await store.settleNotification('ntf_1', { status: 'delivered', at: T0 + 1 });
      expect(await store.countNotifications()).toEqual({ pending: 1, delivered: 1, failed: 0 });
      expect(await store.nextNotificationDue()).toBe(T0 + MINUTE);
      const listed = await store.listNotifications({ limit: 1 });
      expect(listed.items).toHaveLength(1);
      expect((await store.listNotifications({ limit: 1, cursor: listed.nextCursor! })).items).toHaveLength(1);
    });
  });

  it('reads a plan made before network lists with the network allowed as the configured default list', async () => {
    const url = await database();
    const store = await open(url, { legacyNetworkDomains: ['PyPI.org', 'files.pythonhosted.org'] });
    await store.createSession(session('ses_a'));
    await store.createRun(runInput('run_a', 'ses_a'));
    await store.createRun(runInput('run_b', 'ses_a'));
    await store.createPlan(plan('pln_old', 'run_a'));
    await store.createPlan(plan('pln_off', 'run_b'));
    // As a plan of migration 4 was stored: the boolean alone.
    await onDatabase(url, `UPDATE plans SET network = (id = 'pln_old'), network_domains = NULL`);
    expect((await store.getPlan('pln_old'))!.network).toEqual(['files.pythonhosted.org', 'pypi.org']);
    expect((await store.getPlan('pln_off'))!.network).toEqual([]);
    // Without a configured list: the built-in default.
    const plain = await open(url);
    expect((await plain.getPlan('pln_old'))!.network).toEqual(normalizedDomains(DEFAULT_NETWORK_DOMAINS));
  });

  it("the approvers' queue reads the pending plans' own index, not every decided plan before them", async () => {
    const url = await database();
    const store = await open(url);
    const first = await givenPlan(store, 'pln_first');
    // 3,000 decided plans, then 3,000 pending ones: newest last, as a queue that has been in use has them.
    // Each pending plan is its own run's (one pending plan per run): those runs are copies of the first's.
    await onDatabase(
      url,
      `INSERT INTO runs SELECT (jsonb_populate_record(r, jsonb_build_object('id', 'run_' || n))).*
       FROM runs r, generate_series(3001, 6000) AS n WHERE r.id = '${first.runId}'`,
    );
    await onDatabase(
      url,
      `INSERT INTO plans SELECT ('pln_' || n) AS id, CASE WHEN n > 3000 THEN 'run_' || n ELSE run_id END, session_id, conversation_id, ('toolu_' || n),
         markdown, sha256, workspace_commit,
         CASE WHEN n > 3000 THEN 'pending_approval' ELSE 'rejected' END, round, previous_plan_id, requested_by,
         created_at + n, job_id, trigger_id, source, expires_at + n * 1000, approvals_required,
         allow_self_approval, execute_mode, network, owner, decided_at, failure_reason, subject
       FROM plans, generate_series(1, 6000) AS n WHERE id = '${first.id}'`,
    ).catch(async (err) => {
      // The column list above follows the plans table; say which column moved if it no longer does.
      throw new Error(`seeding plans: ${(err as Error).message}`);
    });
    await onDatabase(url, 'ANALYZE plans');
    // The statement listPlans sends, as sent: caught on its way to the server.
    const sent: { text: string; values: unknown[] }[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
      // A string and its values, or a query config (a named, prepared statement).
      const [first, second] = args;
      const text = typeof first === 'string' ? first : first?.text;
      const values = typeof first === 'string' ? second : first?.values;
      if (typeof text === 'string' && /FROM plans/.test(text) && /LIMIT/.test(text))
        sent.push({ text, values });
      return (query as any).apply(this, args);
    } as typeof query;
    let page: Awaited<ReturnType<typeof store.listPlans>>;
    try {
      page = await store.listPlans({ status: 'pending_approval', activeAt: T0, limit: 50, summary: true });
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(page.items.map((p) => p.id)).toEqual([
      first.id,
      ...Array.from({ length: 49 }, (_, i) => `pln_${3001 + i}`),
    ]);
    expect(sent).toHaveLength(1);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const explained = await client.query(`EXPLAIN (FORMAT JSON) ${sent[0]!.text}`, sent[0]!.values);
      // Left to itself the planner walked plans_by_created and filtered, reading every decided plan first.
      const plan = JSON.stringify(explained.rows[0]['QUERY PLAN']);
      expect(plan).toContain('"Index Name":"plans_pending_queue"');
      expect(plan).not.toContain('plans_by_created');
    } finally {
      await client.end();
    }
  });
});
