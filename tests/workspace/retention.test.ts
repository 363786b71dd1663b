import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/workspace/retention.js';
import { runCli } from '../cli/cli-process.js';
import {
  approveAs,
  calls,
  PLAN_MD,
  pendingApproval,
  plannedJob,
  proposes,
  runUntil,
  says,
  type World,
  world,
} from '../plans/helpers.js';
import { git } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// Retention on a real repository: an execution's worktree and its local branch go once the plan has been
// settled for the retention time; a worktree a run can still use stays.

let model: ModelServer;
let w: World;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  await model.close();
});

const HOUR = 3_600_000;

describe('retention', () => {
  it('removes a settled execution worktree and its branch after the retention time, never one in use', async () => {
    // Worktrees live under work_dir when it is set (a volume replicas share), not under data_dir.
    w = await world(model, { execute_mode: 'auto' }, (c) => {
      c.work_dir = join(c.data_dir, '..', 'work');
    });
    const alice = await w.token('alice');
    model.enqueue(proposes('p1'), calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }), says('done'));
    const done = await plannedJob(w.d, w.jobId);
    const exec = await runUntil(w.d, (await approveAs(w.d, done.plan, alice)).id, ['completed', 'failed']);
    expect(exec.status, exec.error).toBe('completed');
    const dataDir = w.d.config.data_dir;
    const workRoot = w.d.config.work_dir!;
    expect(existsSync(join(dataDir, 'worktrees'))).toBe(false);
    const settledTree = join(workRoot, 'worktrees', done.plan.id);
    expect(existsSync(settledTree)).toBe(true);

    // A second plan, executing in manual mode: its run waits for a person, so its worktree is in use.
    const second = await w.d.api('POST', `/v1/sessions`, {
      workspace: w.repo,
      defaults: { execute_mode: 'manual' },
    });
    const job2 = await w.d.api('POST', `/v1/sessions/${second.body.id}/jobs`, {
      cron: '0 9 * * *',
      prompt: 'more',
    });
    model.enqueue(
      proposes('p2', `${PLAN_MD}3. More\n`),
      calls('w2', 'Write', { file_path: 'b.txt', content: 'B\n' }),
    );
    const busy = await plannedJob(w.d, job2.body.id);
    // Executions never move the person's checkout, so the second plan's base still holds.
    await approveAs(w.d, busy.plan, alice);
    await pendingApproval(w.d);
    const busyTree = join(workRoot, 'worktrees', busy.plan.id);
    expect(existsSync(busyTree)).toBe(true);

    const store = w.d.daemon.store;
    // Not yet: settled less than the retention time ago.
    const early = await collectGarbage({ store, workRoot }, { ttlMs: HOUR, now: Date.now() });
    expect(early).toMatchObject({ worktrees: [], checkouts: [], kept: 2, failed: [] });

    // A dry run says what would go and removes nothing.
    const dry = await runCli(['gc', '--dry-run', '--data-dir', dataDir], {
      DRYDOCK_LOG_LEVEL: 'silent',
      DRYDOCK_WORK_DIR: workRoot,
    });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(
      'nothing to remove; 2 kept (in use, or settled less than retention.worktree_ttl_ms ago)\n',
    );
    // With no retention time the settled worktree is due: named, and counted in words.
    const noTtl = join(dataDir, '..', 'no-retention.yaml');
    writeFileSync(noTtl, 'retention:\n  worktree_ttl_ms: 0\n');
    const due = await runCli(['gc', '--dry-run', '--config', noTtl, '--data-dir', dataDir], {
      DRYDOCK_LOG_LEVEL: 'silent',
      DRYDOCK_WORK_DIR: workRoot,
    });
    expect(due.code, due.stderr).toBe(0);
    expect(due.stdout).toBe(
      `would remove worktree and branch drydock/${done.plan.id}\n` +
        'would remove 1 worktree and no pull request checkouts; 1 kept (in use, or settled less than retention.worktree_ttl_ms ago)\n',
    );
    expect(existsSync(settledTree)).toBe(true);

    const later = await collectGarbage({ store, workRoot }, { ttlMs: HOUR, now: Date.now() + 2 * HOUR });
    expect(later).toMatchObject({ worktrees: [done.plan.id], kept: 1, failed: [] });
    expect(existsSync(settledTree)).toBe(false);
    expect(existsSync(busyTree)).toBe(true);
    const branches = git(w.repo, 'branch', '--list', 'drydock/*');
    expect(branches).not.toContain(done.plan.id);
    expect(branches).toContain(busy.plan.id);
    expect(git(w.repo, 'worktree', 'list')).not.toContain(done.plan.id);
    // The person's checkout is untouched.
    expect(git(w.repo, 'status', '--porcelain')).toBe('');
  });
});
