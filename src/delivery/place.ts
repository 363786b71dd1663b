import type { DeliveryTarget, PlanDelivery, PullRequestCheckout } from '../domain/types.js';
import type { Logger } from '../logger.js';
import {
  fetchBranch,
  type GitCredentials,
  PushRefusedError,
  pushBranch,
  pushCommit,
  remoteBranchCommit,
} from '../workspace/git.js';
import { keptReplay, onlyParent, ontoRef, replayCommit } from '../workspace/replay.js';
import { branchFor } from '../workspace/worktree.js';
import { permanentGitFailure } from './classify.js';
import type { Route } from './pr-target.js';

// The first step of a delivery: the execution's commit put where its route says (pr-target.ts), and recorded
// at once. Each way is safe to do again after a crash between the remote taking it and the record: a push of
// what the remote already has is "up to date"; a replay is kept in the repository (replay.ts) and the same
// commit pushed again.

/** A failure no retry can mend (the local branch or the session is gone, a stale head): it fails at once. */
export class PermanentDeliveryError extends Error {}

/** What placing one plan's commit needs. */
export interface Placing {
  planId: string;
  /** The workspace's repository, and the execution's commit on drydock/<plan id> there. */
  repo: string;
  commit: string;
  remote: string;
  /** The remote's name and URL without credentials. */
  remoteLabel: string;
  remoteOptions: { timeoutMs: number; signal: AbortSignal; credentials?: GitCredentials };
  /** The pull request the run came from; null for other runs. */
  origin: PullRequestCheckout | null;
  logger: Logger;
  now: () => number;
  /** Writes fields of the delivery to its plan row (and to `done`). */
  record: (patch: Partial<PlanDelivery>) => Promise<void>;
}

/**
 * Puts the commit where `route` says, unless `done` records it there already; returns where it went
 * (`patch`: nowhere, the change is to be posted as a patch). A delivery an earlier version began (pushed, no
 * target recorded) goes the route's way too: pushing the same branch again is "up to date", and a pull
 * request's branch that holds the contributor's commits is never replaced by force.
 */
export async function place(p: Placing, done: PlanDelivery, route: Route): Promise<DeliveryTarget> {
  if (done.target === 'patch') return 'patch';
  if (route.replay) return placeReplayed(p, done);
  if (route.target === 'head' && done.target !== 'stacked') {
    if (await placeOnHead(p, done, route)) return 'head';
  }
  const target = route.target === 'head' ? 'stacked' : route.target;
  if (done.pushedAt !== null && done.commit === p.commit && done.target === target) return target;
  if (p.origin) await onTheHead(p, p.origin);
  const branch = branchFor(p.planId);
  await pushBranch(p.repo, p.remote, branch, p.remoteOptions).catch((err) => {
    throw pushFailed(p, err);
  });
  await p.record({ target, branch, commit: p.commit, remote: p.remoteLabel, pushedAt: p.now() });
  return target;
}

/**
 * head: the execution's commit pushed onto the pull request's own branch, only while that branch is still at
 * the commit the plan was made on (a lease on it: `pushCommit`); nothing is ever forced. A branch that moved
 * fails the delivery as stale. True when the commit is there; false when the remote refused the push by its own
 * rules (a protected branch, no permission for it) and the route falls back to stacked.
 */
async function placeOnHead(p: Placing, done: PlanDelivery, route: Route): Promise<boolean> {
  const pr = p.origin!;
  if (done.target === 'head' && done.pushedAt !== null && done.commit === p.commit) return true;
  await onTheHead(p, pr);
  try {
    await pushCommit(p.repo, p.remote, p.commit, pr.headRef, { ...p.remoteOptions, expected: pr.headSha });
  } catch (err) {
    if (err instanceof PushRefusedError && err.reason === 'stale') {
      throw new PermanentDeliveryError(await staleMessage(p, pr));
    }
    if (err instanceof PushRefusedError && err.reason === 'remote_rejected' && route.fallback) {
      p.logger.warn(
        { plan_id: p.planId, branch: pr.headRef, refusal: err.detail },
        "the remote refused a push onto the pull request's branch: opening a pull request into it instead",
      );
      return false;
    }
    throw pushFailed(p, err);
  }
  await p.record({
    target: 'head',
    branch: pr.headRef,
    commit: p.commit,
    remote: p.remoteLabel,
    pushedAt: p.now(),
  });
  return true;
}

/**
 * base for a pull request's run: only the execution's change, replayed onto the base branch as fetched now,
 * pushed as drydock/<plan id> (never forced). When it does not apply there without the pull request's commits,
 * nothing is pushed and the target is `patch`.
 */
async function placeReplayed(p: Placing, done: PlanDelivery): Promise<DeliveryTarget> {
  const pr = p.origin!;
  const branch = branchFor(p.planId);
  let replayed = await keptReplay(p.repo, p.planId, p.commit);
  if (replayed && done.target === 'base' && done.pushedAt !== null && done.commit === replayed) return 'base';
  if (!replayed) {
    await onTheHead(p, pr);
    const onto = await fetchBranch(p.repo, p.remote, pr.baseRef, ontoRef(p.planId), p.remoteOptions).catch(
      (err: Error & { stderr?: string }) => {
        const detail = (err.stderr || err.message).trim();
        throw remoteFailure(`could not fetch ${pr.baseRef} from ${p.remoteLabel}: ${detail}`, detail);
      },
    );
    replayed = await replayCommit(p.repo, p.planId, p.commit, onto);
    if (replayed === null) {
      p.logger.info(
        { plan_id: p.planId, base: pr.baseRef },
        "the execution's change does not apply to the base without the pull request's commits: posting it as a patch",
      );
      await p.record({ target: 'patch', branch: null, commit: p.commit, remote: null });
      return 'patch';
    }
    if (replayed === onto) {
      throw new PermanentDeliveryError(
        `the execution's change is in ${pr.baseRef} already: there is nothing to deliver`,
      );
    }
  }
  await pushCommit(p.repo, p.remote, replayed, branch, p.remoteOptions).catch((err) => {
    throw pushFailed(p, err);
  });
  await p.record({ target: 'base', branch, commit: replayed, remote: p.remoteLabel, pushedAt: p.now() });
  return 'base';
}

/**
 * The commit delivered for a pull request is one commit of the execution on the pull request's head, the
 * commit the plan was made on. Anything else (an execution that changed nothing leaves drydock/<plan id> at
 * the head itself, whose "change" would be the contributor's last commit) is refused.
 */
async function onTheHead(p: Placing, pr: PullRequestCheckout): Promise<void> {
  const parent = await onlyParent(p.repo, p.commit).catch(() => null);
  if (parent !== pr.headSha) {
    throw new PermanentDeliveryError(
      `drydock/${p.planId} (${p.commit.slice(0, 12)}) is not one commit of the execution on ${pr.repository}#${pr.number}'s head ${pr.headSha.slice(0, 12)}: there is nothing of drydock's to deliver`,
    );
  }
}

async function staleMessage(p: Placing, pr: PullRequestCheckout): Promise<string> {
  const now = await remoteBranchCommit(p.repo, p.remote, pr.headRef, p.remoteOptions).catch(() => undefined);
  const where =
    now === undefined ? 'elsewhere' : now === null ? 'nowhere (it is gone)' : `to ${now.slice(0, 12)}`;
  return (
    `stale: ${pr.repository}#${pr.number}'s branch ${pr.headRef} moved from ${pr.headSha.slice(0, 12)} ${where} ` +
    'since the plan was made; nothing was pushed (plan again on the new head)'
  );
}

/**
 * The push's failure as the delivery records it: permanent (a PermanentDeliveryError, not retried) when the remote
 * refused it by its rules or git says no retry can mend it (classify.ts), with what to do; else retried.
 */
function pushFailed(p: Placing, err: unknown): Error {
  const e = err as Error & { stderr?: string };
  const detail = err instanceof PushRefusedError ? err.detail : (e.stderr || e.message).trim();
  const message = `git push to ${p.remoteLabel} failed: ${detail}`;
  if (err instanceof PushRefusedError) {
    const why =
      err.reason === 'remote_rejected'
        ? 'the remote refused the update by its own rules (a protected branch, a hook)'
        : `the remote's branch holds commits drydock did not push, and nothing is forced: delete that branch on the remote, then deliver again`;
    return new PermanentDeliveryError(`${message}; ${why}`);
  }
  return remoteFailure(message, detail);
}

/** `message` as a PermanentDeliveryError with what to do when git's `detail` says no retry mends it. */
export function remoteFailure(message: string, detail: string): Error {
  const hint = permanentGitFailure(detail);
  return hint === undefined ? new Error(message) : new PermanentDeliveryError(`${message}; ${hint}`);
}
