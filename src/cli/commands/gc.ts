import type { RetentionReport } from '../../workspace/retention.js';

// What `drydock gc` prints: a line per worktree or checkout it removed (or, with --dry-run, would remove), then
// one line that counts them in words.

/** `2 worktrees`, `1 pull request checkout`, `no worktrees`. */
function count(n: number, one: string, many: string): string {
  return `${n === 0 ? 'no' : n} ${n === 1 ? one : many}`;
}

/** The lines naming each worktree and checkout, removed or (dry run) to be removed. */
export function gcItemLines(r: RetentionReport, dryRun: boolean): string[] {
  const verb = dryRun ? 'would remove' : 'removed';
  return [
    ...r.worktrees.map((id) => `${verb} worktree and branch drydock/${id}`),
    ...r.checkouts.map((id) => `${verb} pull request checkout ${id}`),
  ];
}

/**
 * `removed 2 worktrees and 1 pull request checkout; 3 kept`, `would remove …` for a dry run, `nothing to
 * remove; 3 kept` when nothing is due.
 */
export function gcSummary(r: RetentionReport, dryRun: boolean): string {
  const kept = `${r.kept} kept (in use, or settled less than retention.worktree_ttl_ms ago)`;
  const failed = r.failed.length ? `; ${r.failed.length} could not be removed (see above)` : '';
  if (r.worktrees.length === 0 && r.checkouts.length === 0) {
    return `${dryRun ? 'nothing to remove' : 'nothing removed'}; ${kept}${failed}`;
  }
  const what = `${count(r.worktrees.length, 'worktree', 'worktrees')} and ${count(r.checkouts.length, 'pull request checkout', 'pull request checkouts')}`;
  return `${dryRun ? 'would remove' : 'removed'} ${what}; ${kept}${failed}`;
}
