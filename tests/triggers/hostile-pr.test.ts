import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { git } from '../support/git-repo.js';
import { deliver, plannedPlan, prPayload, runUntil, type TriggerWorld, triggerWorld } from './helpers.js';

// Anyone who can open a pull request controls the files of its head. A `.gitconfig` there used to be read
// by drydock's own git (HOME was the directory it worked in): its `core.fsmonitor` ran, with the daemon's
// environment, when drydock committed the approved execution, even in manual mode with no tool call.

let w: TriggerWorld;
beforeEach(async () => {
  w = await triggerWorld();
  await w.trigger({
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}}.',
  });
});
afterEach(async () => {
  await w.close();
});

it("a pull request's .gitconfig and .config/git/config never configure drydock's git", async () => {
  const marker = join(w.repo.dir, 'pwned-by-pull-request');
  const xdgMarker = join(w.repo.dir, 'pwned-by-xdg-config');
  const config = (m: string) => `[core]\n\tfsmonitor = "touch ${m}; false"\n\thooksPath = .githooks\n`;
  const head = w.repo.pushBranch('innocent-fix', {
    '.gitconfig': config(marker),
    '.config/git/config': config(xdgMarker),
    '.githooks/pre-commit': `#!/bin/sh\ntouch ${marker}\n`,
    'fix.txt': 'a harmless looking change\n',
  });
  const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: head, ref: 'innocent-fix' }));
  expect(r.status).toBe(202);
  const plan = await plannedPlan(w.d, r.body.run_ids[0]);
  expect(plan.workspace_commit).toBe(head);

  // Any approver approves; the execution (manual mode, no tool call at all) is committed by drydock.
  const approved = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  const exec = await runUntil(w.d, approved.body.run.id, ['completed', 'failed']);
  expect(exec.status, exec.error).toBe('completed');
  expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.status).toBe('executed');
  expect(existsSync(marker)).toBe(false);
  expect(existsSync(xdgMarker)).toBe(false);
  // The branch is where it should be: at the pull request's head (nothing to commit).
  expect(git(w.repo.clone, 'rev-parse', `drydock/${plan.id}`)).toBe(head);
});
