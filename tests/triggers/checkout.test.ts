import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { git } from '../support/git-repo.js';
import {
  calls,
  deliver,
  hasCommit,
  PR_NUMBER,
  plannedPlan,
  proposes,
  prPayload,
  REPO,
  runUntil,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

let w: TriggerWorld;

beforeEach(async () => {
  w = await triggerWorld();
  await w.trigger({
    name: 'review',
    events: ['pull_request.opened', 'pull_request.synchronize'],
    prompt: 'Review {{repository}}#{{number}} at {{head_sha}}.',
  });
});
afterEach(async () => {
  await w.close();
});

const toolResults = (body: any): Record<string, any> =>
  Object.fromEntries(
    body.messages
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: any) => b.type === 'tool_result')
      .map((b: any) => [b.tool_use_id, b]),
  );

describe('a pull request run plans at the pull request head', () => {
  it('fetches a head the clone lacks, reads that commit, and records it as the plan workspace_commit', async () => {
    const head = w.repo.pushBranch('feature/greeting', {
      'only-on-branch.txt': 'greeting marker 7f3a: exists only at the pull request head\n',
      'README.md': '# Hello-World (branch version)\n',
    });
    expect(hasCommit(w.repo.remote, head)).toBe(true);
    expect(hasCommit(w.repo.clone, head)).toBe(false);

    w.model.enqueue(
      calls('toolu_read', 'Read', { file_path: 'only-on-branch.txt' }),
      calls('toolu_readme', 'Read', { file_path: 'README.md' }),
      proposes(),
    );
    const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: head, ref: 'feature/greeting' }));
    expect(r.status).toBe(202);
    expect(r.body.run_ids).toHaveLength(1);
    const plan = await plannedPlan(w.d, r.body.run_ids[0]);
    expect(plan.workspace_commit).toBe(head);
    expect(plan.status).toBe('pending_approval');

    // What the model read came from that commit, not from the clone's checkout of main.
    const results = toolResults(w.model.requests.at(-1)!.body);
    expect(results.toolu_read.is_error ?? false).toBe(false);
    expect(results.toolu_read.content).toContain('greeting marker 7f3a');
    expect(results.toolu_readme.content).toContain('(branch version)');

    // The clone got the commit; its own checkout was not touched, and the planning worktree is gone.
    expect(hasCommit(w.repo.clone, head)).toBe(true);
    expect(git(w.repo.clone, 'rev-parse', 'HEAD')).toBe(w.repo.base);
    expect(existsSync(join(w.repo.clone, 'only-on-branch.txt'))).toBe(false);
    expect(git(w.repo.clone, 'status', '--porcelain')).toBe('');
    expect(git(w.repo.clone, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });

  it('fails with an error naming the sha when the head commit exists nowhere', async () => {
    const missing = randomBytes(20).toString('hex');
    const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: missing, ref: 'ghost' }));
    expect(r.status).toBe(202);
    expect(r.body.run_ids).toHaveLength(1);
    const run = await runUntil(w.d, r.body.run_ids[0], ['failed', 'planned']);
    expect(run.status).toBe('failed');
    expect(run.error).toContain(missing);
    expect(run.error).toContain(`${REPO}#${PR_NUMBER}`);
    expect(run.plan_id).toBeNull();
    // It never reached the model: nothing was planned against the wrong code.
    expect(w.model.requests).toHaveLength(0);
  });
});
