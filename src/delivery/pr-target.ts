import type { PullRequestCheckout } from '../domain/types.js';

// Where the result of a run goes (`delivery.pr_target`). The invariant: drydock never carries a contributor's
// commits into the base repository's branches, and never pushes into a repository other than the base's.
//
// A run a pull request started executes on the pull request's head: its commit's parent is the contributor's
// last commit. Pushed as a branch and opened as a pull request into the base (what drydock did first), it
// carries every commit of the pull request with it, and merging drydock's pull request lands them unreviewed.
// So for such a run:
//   - head: the commit goes onto the pull request's own branch, as its one new commit (only where the branch is
//     in the same repository, and only while the branch is still where the plan was made: see worker.ts);
//   - stacked: a pull request from drydock/<plan> into the pull request's branch;
//   - base: only drydock's change, replayed onto the base branch (workspace/replay.ts), in a pull request into
//     the base; when it does not apply there without the contributor's commits, a comment with the patch.
// A pull request from a fork (its head repository is another, or unknown) always goes to base: its branch is
// in a repository drydock does not push to (not even when the contributor lets maintainers push to it,
// `maintainer_can_modify`), and a stacked pull request cannot go into it: GitHub's "Create a pull request"
// (https://docs.github.com/rest/pulls/pulls#create-a-pull-request) takes as `base` "an existing branch on
// the current repository. You cannot submit a pull request to one repository that requests a merge to a base
// of another repository". Scheduled, fired and manual runs have no pull request: base, the branch as it is.
//
// Which repository the head is in comes from the pull_request webhook's `pull_request.head.repo.full_name`
// beside `repository.full_name` (https://docs.github.com/webhooks/webhook-events-and-payloads#pull_request),
// kept in the run's checkout (triggers/fire-context.ts).

export type PrTargetSetting = 'head' | 'stacked' | 'base' | null;

/** How a delivery goes, before its first step. */
export interface Route {
  target: 'base' | 'head' | 'stacked';
  /** Only drydock's change, replayed onto the base (a pull request's run going to base). */
  replay: boolean;
  /** head by the default rule: when the remote refuses that push (not as stale), stacked instead. */
  fallback: 'stacked' | null;
  /** Why the route is not what the setting asks (a fork), for the log; null when it is. */
  note: string | null;
}

/**
 * A pull request whose head branch is not in the pull request's repository: a fork, or a repository GitHub
 * no longer names (deleted), or a run recorded before the head's repository was kept. GitHub names are
 * compared without case, as GitHub resolves them.
 */
export function isFork(pr: PullRequestCheckout): boolean {
  return !pr.headRepository || pr.headRepository.toLowerCase() !== pr.repository.toLowerCase();
}

/** The route of a run's result: `pr`, the pull request it came from (or null); `setting`, delivery.pr_target. */
export function routeOf(pr: PullRequestCheckout | null, setting: PrTargetSetting): Route {
  if (!pr) return { target: 'base', replay: false, fallback: null, note: null };
  if (isFork(pr)) {
    return {
      target: 'base',
      replay: true,
      fallback: null,
      note:
        setting === 'head' || setting === 'stacked'
          ? `delivery.pr_target is ${setting}, but ${pr.repository}#${pr.number} comes from ${pr.headRepository ?? 'a repository GitHub no longer names'}: its result goes to the base`
          : null,
    };
  }
  if (setting === null) return { target: 'head', replay: false, fallback: 'stacked', note: null };
  return { target: setting, replay: setting === 'base', fallback: null, note: null };
}
