import { executionBase } from '../domain/footprint.js';
import type { Plan, Run, Session } from '../domain/types.js';
import type { ExecutionTree } from '../workspace/worktree.js';
import { type MemorySource, type ProjectMemory, projectMemory } from './memory.js';
import type { PhaseDeps } from './phase.js';
import type { Workspace } from './tools/workspace.js';

export { withMemory } from './memory.js';

/**
 * Where a plan run reads project memory. A pull request's run: from the PR's base commit, in the configured
 * clone's object database, never from its head (whoever opened the pull request wrote the head, CLAUDE.md
 * included; docs/security.md); without a recorded base commit (a run from before it was kept), none.
 * A run on a commit another event named (`CommitCheckout`): its worktree's files when the commit is the team's
 * own (`memory`), else none. Any other run: the workspace's files.
 */
export function planMemorySource(run: Run, workspace: Workspace): MemorySource | null {
  if (!run.checkout) return { kind: 'workspace', workspace };
  if (run.checkout.kind === 'commit') return run.checkout.memory ? { kind: 'workspace', workspace } : null;
  const base = run.checkout.baseSha;
  return base ? { kind: 'commit', repo: run.checkout.clone, commit: base, prefix: '' } : null;
}

/**
 * Where an execution reads project memory: pinned, never the live working tree. A pull request's plan: its
 * base commit (as its plan run read it); a git workspace's: the commit it executes from, in the session's
 * subdirectory; a plain workspace's: the copy the execution works on, made when it first opened.
 */
export async function executeMemorySource(
  deps: PhaseDeps,
  plan: Plan,
  session: Session,
  place: { workspace: Workspace; tree: ExecutionTree | null },
): Promise<MemorySource | null> {
  const planned = plan.subject !== null ? await deps.store.getRun(plan.runId) : null;
  if (planned?.checkout?.kind === 'commit' && !planned.checkout.memory) return null;
  if (planned?.checkout && planned.checkout.kind !== 'commit')
    return planMemorySource(planned, place.workspace);
  const base = executionBase(plan);
  if (place.tree && base) {
    return {
      kind: 'commit',
      repo: session.workspace,
      commit: base,
      prefix: place.tree.prefix,
    };
  }
  return { kind: 'workspace', workspace: place.workspace };
}

/** The memory of `source` under the configured cap; a failure to read it is logged, and the run goes without. */
export async function readMemory(
  deps: PhaseDeps,
  run: Run,
  source: MemorySource | null,
): Promise<ProjectMemory | null> {
  if (!source) return null;
  try {
    return await projectMemory(source, deps.config.runs.memory_max_bytes);
  } catch (err) {
    deps.logger.warn(
      { err, run_id: run.id, from: source.kind === 'workspace' ? 'workspace' : source.commit },
      'project memory could not be read; the conversation starts without it',
    );
    return null;
  }
}
