import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueToken } from '../../src/auth/tokens.js';
import type { PlanStatus, RunStatus } from '../../src/domain/types.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { childParams, fail, finish } from './child-io.js';
import { APPROVER, CREATE_EXPIRY_INDEX, planMarkdown, prng, VIEWER } from './fixtures.js';
import type { PoolPlan, Pools, SeedParams, SeedResult } from './protocol.js';

// Child: builds the database the daemon will open. Sessions, tokens, and N plans each with the plan-phase
// run that proposed it, written with the Store's own methods (createSession, createToken, createRun,
// transitionRun, updateRun, createPlan) inside store.db transactions of 5,000 plans. better-sqlite3 is
// synchronous, so the SQL of those async methods runs inside the transaction as they are called; their
// promises are awaited after each batch to surface errors. History gets what the decision flow would have
// left: decided_at, a decision row, and for executed / failed plans their execute run.

const p = childParams<SeedParams>();

const DAY = 86_400_000;
const TTL = 7 * DAY;
/** History by share of the non-pending plans. */
const HISTORY: [PlanStatus, number][] = [
  ['executed', 0.45],
  ['rejected', 0.2],
  ['expired', 0.2],
  ['superseded', 0.1],
  ['execution_failed', 0.05],
];

function gitWorkspace(dir: string): string | null {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@localhost',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@localhost',
  };
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, ...args], { env })
        .toString()
        .trim();
    git('init', '-q');
    writeFileSync(join(dir, 'README.md'), '# bench workspace\n');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    return git('rev-parse', 'HEAD');
  } catch {
    return null;
  }
}

/** newId's format (a prefix and 96 random bits, base64url), with the random bytes drawn 64 KB at a time. */
const ids = {
  pool: Buffer.alloc(0),
  at: 0,
  next(prefix: string): string {
    if (this.at + 12 > this.pool.length) {
      this.pool = randomBytes(65_532);
      this.at = 0;
    }
    this.at += 12;
    return `${prefix}_${this.pool.subarray(this.at - 12, this.at).toString('base64url')}`;
  },
};

async function main(): Promise<SeedResult> {
  const started = performance.now();
  const rand = prng(0x5eed);
  const workspace = join(p.dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const head = p.git ? gitWorkspace(workspace) : null;

  const store = new SqliteStore({ file: p.file, now: () => p.now });
  const viewer = issueToken('bench viewer', VIEWER, 'viewer', p.now);
  const approver = issueToken('bench approver', APPROVER, 'approver', p.now);
  await store.createToken(viewer.record);
  await store.createToken(approver.record);

  const sessions: { id: string; owner: string }[] = [];
  for (let i = 0; i < p.sessions; i++) {
    const owner = `owner-${i % 25}`;
    const s = await store.createSession({
      id: ids.next('ses'),
      name: `bench-${i}`,
      workspace,
      owner,
      defaults: {},
      createdAt: p.now - 200 * DAY,
    });
    sessions.push({ id: s.id, owner });
  }

  // Pending plans are recent (inside the TTL), history is older; inserted in time order, as they happen.
  const pending = Math.round((p.plans * p.pendingPct) / 100);
  const specs: { at: number; status: PlanStatus }[] = [];
  for (let i = 0; i < p.plans; i++) {
    if (i < pending) {
      specs.push({ at: p.now - 60_000 - Math.floor(rand() * 6 * DAY), status: 'pending_approval' });
      continue;
    }
    let r = rand();
    let status: PlanStatus = 'executed';
    for (const [s, share] of HISTORY) {
      status = s;
      if (r < share) break;
      r -= share;
    }
    specs.push({ at: p.now - 8 * DAY - Math.floor(rand() * 180 * DAY), status });
  }
  specs.sort((a, b) => a.at - b.at);

  const db = store.db;
  // Seeding only: no journal and no syncs (the daemon reopens the file in WAL mode, as always).
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  const decide = db.prepare(
    'UPDATE plans SET decided_at = ?, failure_reason = ? WHERE id = ?', // as decidePlan / expirePlans / the executor leave it
  );
  const decision = db.prepare(
    'INSERT INTO decisions (id, plan_id, kind, identity, comment, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const statuses: Record<string, number> = {};
  const pool: PoolPlan[] = [];
  let runs = 0;
  let executeRuns = 0;
  let decisions = 0;
  let mdTotal = 0;
  let mdMax = 0;
  const BATCH = 5_000;
  for (let start = 0; start < specs.length; start += BATCH) {
    const calls: Promise<unknown>[] = [];
    db.transaction(() => {
      for (let i = start; i < Math.min(specs.length, start + BATCH); i++) {
        const { at, status } = specs[i]!;
        const session = sessions[Math.floor(rand() * sessions.length)]!;
        const runId = ids.next('run');
        const runAt = at - 20_000 - Math.floor(rand() * 280_000);
        calls.push(
          store.createRun({
            id: runId,
            sessionId: session.id,
            jobId: null,
            slotAt: null,
            source: 'manual',
            prompt: 'Plan the change described in the issue.',
            requestedBy: session.owner,
            createdAt: runAt,
          }),
          store.transitionRun(runId, ['queued'], 'planned', { startedAt: runAt + 50, finishedAt: at }),
        );
        const markdown = planMarkdown(rand, i, p.markdownBytes);
        const sha256 = createHash('sha256').update(markdown).digest('hex');
        const planId = ids.next('pln');
        calls.push(
          store.createPlan({
            id: planId,
            runId,
            sessionId: session.id,
            conversationId: runId,
            toolUseId: ids.next('toolu'),
            markdown,
            sha256,
            workspaceCommit: head,
            status,
            round: status === 'superseded' ? 1 : 1 + (rand() < 0.1 ? 1 : 0),
            previousPlanId: null,
            requestedBy: session.owner,
            createdAt: at,
            jobId: null,
            triggerId: null,
            source: 'manual',
            // Nothing pending may expire while measuring: a month ahead (the TTL is a week).
            expiresAt: status === 'pending_approval' ? p.now + 30 * DAY : at + TTL,
            approvalsRequired: 1,
            allowSelfApproval: false,
            executeMode: 'manual',
            network: [],
            owner: session.owner,
            decidedAt: null,
            failureReason: null,
            subject: null,
          }),
          store.updateRun(runId, { planId }),
        );
        runs += 1;
        mdTotal += markdown.length;
        mdMax = Math.max(mdMax, markdown.length);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 'pending_approval') {
          pool.push([planId, sha256]);
          continue;
        }
        const decidedAt = status === 'expired' ? at + TTL : at + 60_000 + Math.floor(rand() * DAY);
        decide.run(decidedAt, status === 'execution_failed' ? 'npm test failed' : null, planId);
        const reviewer = `reviewer-${Math.floor(rand() * 10)}`;
        const kind =
          status === 'rejected'
            ? 'reject'
            : status === 'superseded'
              ? 'revise'
              : status === 'expired'
                ? null
                : 'approve';
        if (kind) {
          decision.run(
            ids.next('dec'),
            planId,
            kind,
            reviewer,
            kind === 'approve' ? null : 'not like this',
            sha256,
            decidedAt,
          );
          decisions += 1;
        }
        if (status === 'executed' || status === 'execution_failed') {
          const execId = ids.next('run');
          const outcome: RunStatus = status === 'executed' ? 'completed' : 'failed';
          calls.push(
            store.createRun({
              id: execId,
              sessionId: session.id,
              jobId: null,
              slotAt: null,
              source: 'manual',
              prompt: `Your plan was approved by ${reviewer}. Implement the plan you proposed, exactly as written.`,
              requestedBy: session.owner,
              createdAt: decidedAt,
              conversationId: runId,
              phase: 'execute',
              executesPlanId: planId,
            }),
            store.transitionRun(execId, ['queued'], outcome, {
              startedAt: decidedAt + 10,
              finishedAt: decidedAt + 120_000,
            }),
          );
          runs += 1;
          executeRuns += 1;
        }
      }
    }).immediate();
    await Promise.all(calls);
  }
  if (p.expiryIndex) db.exec(CREATE_EXPIRY_INDEX);
  db.pragma('journal_mode = WAL');
  await store.close();

  // Disjoint pools of pending plans in random order: half over HTTP, 15 % each for the in-process baselines.
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  const half = Math.floor(pool.length * 0.5);
  const share = Math.floor(pool.length * 0.15);
  const pools: Pools = {
    http: pool.slice(0, half),
    store: pool.slice(half, half + share),
    service: pool.slice(half + share, half + 2 * share),
  };
  writeFileSync(p.poolsFile, JSON.stringify(pools));

  return {
    type: 'seeded',
    seedMs: performance.now() - started,
    fileBytes: statSync(p.file).size,
    statuses,
    runs,
    executeRuns,
    decisions,
    sessions: sessions.length,
    workspace: head ? 'git' : 'plain',
    markdownBytes: { mean: mdTotal / p.plans, max: mdMax },
    tokens: { viewer: viewer.token, approver: approver.token },
    identities: { viewer: viewer.record.identity, approver: approver.record.identity },
    pools: { http: pools.http.length, store: pools.store.length, service: pools.service.length },
  };
}

main().then(finish, fail);
