import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../../src/config/schema.js';
import { planTitle } from '../../src/domain/plan-title.js';
import type { ExecuteMode, Plan, Run, Session } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import type { Store } from '../../src/store/store.js';
import { unconfined } from '../../src/workspace/isolation.js';
import { commitExecution, prepareWorktree } from '../../src/workspace/worktree.js';
import { makeRepo } from '../support/git-repo.js';
import { sha256 } from './helpers.js';

export interface SeededExecution {
  repo: string;
  base: string;
  session: Session;
  plan: Plan;
  planRun: Run;
  run: Run;
  /** The execution's worktree. */
  top: string;
}

/**
 * A git repository, a session on it, a plan made against its HEAD and an execute run that really ran in the
 * plan's worktree (prepareWorktree), changed files there (`changes`: content, or null to delete) and
 * committed them (commitExecution), as the execute phase does. `status` leaves the run unfinished. `h` is a
 * harness, or a test daemon's parts.
 */
export async function seedExecution(
  h: { dir: string; store: Store; clock: { now(): number }; config: Config },
  o: {
    files?: Record<string, string>;
    changes?: Record<string, string | null>;
    status?: 'completed' | 'running' | 'failed';
    markdown?: string;
    executeMode?: ExecuteMode;
  } = {},
): Promise<SeededExecution> {
  const now = h.clock.now();
  const repo = join(h.dir, `repo-${randomUUID().slice(0, 8)}`);
  const base = makeRepo(repo, o.files ?? { 'README.md': '# demo\n', 'src/app.ts': 'export const a = 1;\n' });
  const session = await h.store.createSession({
    id: newId('ses'),
    name: 'nightly-review',
    workspace: repo,
    owner: 'operator-user',
    defaults: {},
    createdAt: now,
  });
  const planRun = await h.store.createRun({
    id: newId('run'),
    sessionId: session.id,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'Plan something',
    requestedBy: 'operator-user',
    createdAt: now,
  });
  await h.store.transitionRun(planRun.id, ['queued'], 'planned', { startedAt: now, finishedAt: now });
  const markdown = o.markdown ?? '# Change the app\n\n1. Edit src/app.ts.\n';
  const plan = await h.store.createPlan({
    id: newId('pln'),
    runId: planRun.id,
    sessionId: session.id,
    conversationId: planRun.id,
    toolUseId: 'toolu_plan',
    markdown,
    sha256: sha256(markdown),
    workspaceCommit: base,
    status: o.status === 'running' ? 'executing' : o.status === 'failed' ? 'execution_failed' : 'executed',
    round: 1,
    previousPlanId: null,
    requestedBy: 'operator-user',
    createdAt: now,
    jobId: null,
    triggerId: null,
    source: 'manual',
    expiresAt: now + 86_400_000,
    approvalsRequired: 1,
    allowSelfApproval: false,
    executeMode: o.executeMode ?? 'edits',
    network: [],
    owner: 'operator-user',
    decidedAt: now,
    failureReason: null,
    subject: null,
  });
  await h.store.updateRun(planRun.id, { planId: plan.id });
  // As the delivery worker decides an executed plan whose session did not ask for delivery.
  if (plan.status === 'executed') await h.store.updatePlanDelivery(plan.id, [null], { status: 'off' });
  const conversationId = `cnv_${randomUUID()}`;
  const run = await h.store.createRun({
    id: newId('run'),
    sessionId: session.id,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'Execute the plan',
    requestedBy: 'approver-user',
    createdAt: now,
    phase: 'execute',
    executesPlanId: plan.id,
    conversationId,
  });
  // Held under a replica name of the seed's own, with a lease that outlives the test: a live daemon's queue
  // would otherwise take an unclaimed running run over (and run it) at its next sweep.
  const claimed = await h.store.claimRun(
    run.id,
    'queued',
    { replica: 'execution-seed', leaseUntil: now + 24 * 3_600_000 },
    now,
  );
  if (!claimed) throw new Error(`the seeded execute run ${run.id} could not be started`);
  const tree = await prepareWorktree(repo, plan.id, base, join(h.config.data_dir, 'worktrees'));
  for (const [path, content] of Object.entries(o.changes ?? { 'src/app.ts': 'export const a = 2;\n' })) {
    const abs = join(tree.root, path);
    if (content === null) rmSync(abs);
    else {
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
  }
  if ((o.status ?? 'completed') === 'completed') {
    const result = await commitExecution(
      tree,
      base,
      { id: plan.id, sha256: plan.sha256, title: planTitle(markdown) },
      unconfined,
      join(h.config.data_dir, 'scratch', plan.id),
    );
    await h.store.updateRun(run.id, {
      resultCommit: result.commit,
      diffStat: result.diffStat,
      changedFiles: result.changedFiles,
    });
    await h.store.transitionRun(run.id, ['running'], 'completed', { finishedAt: now + 1_000 });
  } else if (o.status === 'failed') {
    await h.store.transitionRun(run.id, ['running'], 'failed', { finishedAt: now + 1_000, error: 'boom' });
  }
  return {
    repo,
    base,
    session,
    plan: (await h.store.getPlan(plan.id))!,
    planRun: (await h.store.getRun(planRun.id))!,
    run: (await h.store.getRun(run.id))!,
    top: tree.top,
  };
}
