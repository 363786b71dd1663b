import type { Plan } from './types.js';

// What a plan says about the uncommitted changes its git workspace had when it was made (Plan.uncommitted):
// the plan was read from the commit, without them, and its execution starts from a commit as well. One
// sentence, said alike by the API (and through it the CLI) and the plan page.

/** The sentence for a plan made while its workspace had uncommitted changes; null when it had none. */
export function uncommittedNotice(
  plan: Pick<Plan, 'uncommitted' | 'workspaceCommit' | 'executionBase'>,
): string | null {
  const u = plan.uncommitted;
  if (!u || u.count === 0 || !plan.workspaceCommit) return null;
  const more = u.count > u.paths.length ? `, … ${u.count - u.paths.length} more` : '';
  const what = `${u.count} uncommitted change${u.count === 1 ? '' : 's'} (${u.paths.join(', ')}${more})`;
  const commit = plan.workspaceCommit.slice(0, 12);
  const base = plan.executionBase && plan.executionBase !== plan.workspaceCommit ? plan.executionBase : null;
  const execution = base
    ? `the execution starts from commit ${base.slice(0, 12)}, which the workspace moved on to without touching what the plan read`
    : 'the execution starts from that commit too';
  return `The workspace had ${what}; this plan was made from commit ${commit} without ${u.count === 1 ? 'it' : 'them'}, and ${execution}.`;
}
