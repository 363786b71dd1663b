import type { Clock } from '../clock.js';
import { pullRequestDeliveryProblem } from '../config/delivery.js';
import type { Config } from '../config/schema.js';
import { DomainError } from '../domain/errors.js';
import type { RunEventMap, RunEventType } from '../domain/events.js';
import { planTitle } from '../domain/plan-title.js';
import type {
  DeliveryTarget,
  Plan,
  PlanDelivery,
  PullRequestCheckout,
  Run,
  Session,
} from '../domain/types.js';
import type { GithubAuth } from '../github/auth.js';
import { type GithubApi, GithubCallError } from '../github/client.js';
import {
  githubHosts,
  githubRepositoryOfPath,
  githubRepositoryOfUrl,
  pullRequestOf,
} from '../github/target.js';
import type { Logger } from '../logger.js';
import { PassLoop } from '../pass-loop.js';
import type { Reaction } from '../reactions/reactions.js';
import type { RunEvents } from '../runs/events.js';
import {
  type OutboxStore,
  type PlanStore,
  type RunStore,
  type SessionStore,
  StoreUnavailableError,
} from '../store/store.js';
import { branchCommit, type GitCredentials, remoteDefaultBranch, remoteUrl } from '../workspace/git.js';
import { commitPatch } from '../workspace/replay.js';
import { branchFor } from '../workspace/worktree.js';
import {
  deliveryMarker,
  PATCH_COMMENT_MAX,
  patchComment,
  pullRequestBody,
  pullRequestComment,
} from './body.js';
import { githubFailureHint, permanentGithubFailure } from './classify.js';
import { PermanentDeliveryError, place, remoteFailure } from './place.js';
import { routeOf } from './pr-target.js';
import { scrub, withoutCredentials } from './scrub.js';

// Delivering an executed plan's result: its branch drydock/<plan id> pushed to the workspace's remote, a pull
// request opened on GitHub, and a comment on the pull request the run came from. One owner of the delivery
// lifecycle: this worker decides whether an executed plan is delivered (off or pending), attempts due
// deliveries and records each step as it completes, so a retry goes on where the last attempt stopped.
//
// Durable: its work is read from the store (executed plans not looked at yet, deliveries due), never kept only
// in memory; the event that a plan was executed just wakes it. A daemon that dies between an execution and
// its delivery, or during one, delivers after the next start: the restarted replica takes back its own claims
// at once; another replica takes over a dead one's claim once it lapses.

/** The longest the loop sleeps before it looks at the store again. */
const MAX_SLEEP_MS = 30_000;
/** Deliveries attempted per pass, one after another. */
const BATCH = 10;

/** Run events the worker writes on the execute run (the notification outbox turns the second into delivery.failed). */
export const DELIVERY_COMPLETED = 'delivery_completed' satisfies RunEventType;
export const DELIVERY_FAILED = 'delivery_failed' satisfies RunEventType;

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

export { PermanentDeliveryError };

/** Refused manual delivery (`POST /v1/plans/:id/deliver`); its code says why. */
export class DeliverRequestError extends DomainError<'not_found' | 'conflict'> {}

export interface DeliveryPolicy {
  attempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/**
 * After a failed attempt (`attempts` made so far): when to try next, or null when they are used up. The wait
 * doubles from retryBaseMs per attempt, capped at retryMaxMs.
 */
export function nextAttemptAt(attempts: number, policy: DeliveryPolicy, now: number): number | null {
  if (attempts >= policy.attempts) return null;
  return now + Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.max(0, attempts - 1));
}

export interface DeliveryDeps {
  store: OutboxStore & PlanStore & RunStore & SessionStore;
  clock: Clock;
  config: Config;
  logger: Logger;
  events: RunEvents;
  /** GitHub's REST API (github.token or github.app); without it no pull request is opened and no comment posted. */
  github: GithubApi | null;
  /** drydock's GitHub credentials, for pushes to a remote on GitHub (src/github/auth.ts); null without them. */
  githubAuth: GithubAuth | null;
  /** The plan page's address for people (server.public_url, or the address the daemon listens on). */
  pageUrl: (planId: string) => string;
  /** This daemon's name among the replicas: its claims on deliveries carry it, and its restart ends them. */
  holder: string;
  onOutcome?: (outcome: DeliveryOutcome) => void;
}

/** Where one plan's result goes. */
interface Target {
  repo: string;
  branch: string;
  commit: string;
  remote: string;
  /** The remote's name and URL without credentials. */
  remoteLabel: string;
  credentials: GitCredentials | undefined;
  /** The GitHub repository whose credentials `credentials` are (null: none, or delivery.token). */
  credentialsFrom: string | null;
  /** owner/repo when the repository is on GitHub. */
  repository: string | null;
  /** The pull request the plan's run came from. */
  origin: PullRequestCheckout | null;
  planRun: Run | null;
  executeRun: Run | null;
}

export class PlanDeliveryWorker {
  private readonly loop = new PassLoop({ pass: () => this.loopPass(), unref: true });
  private readonly abort = new AbortController();
  /** Whether this process has ended the claims a killed predecessor of the same replica left. */
  private tookBack = false;

  constructor(private readonly deps: DeliveryDeps) {}

  start(): void {
    this.loop.start();
  }

  /** Looks at the store now (a plan was executed, or a person asked for a delivery). */
  kick(): void {
    this.loop.kick();
  }

  /**
   * Ends the loop and the pushes in flight (their claims are given back: the next start goes on); waits at
   * most `graceMs` for a GitHub call still out (its claim then lapses on its own).
   */
  async stop(graceMs = 5_000): Promise<void> {
    const stopped = this.loop.stop(graceMs);
    this.abort.abort();
    await stopped;
  }

  /**
   * Its reaction (src/reactions/) to `execution_recorded` in the stored event log: a delivery may be due, so
   * the worker looks. Its state stays on the plan row (written with the execution's record), so the effect is
   * only a look, harmless twice; the worker's own timer finds deliveries due later (retries).
   */
  readonly reaction: Reaction = {
    name: 'plan_delivery',
    types: ['execution_recorded'],
    react: async () => this.kick(),
  };

  /**
   * A person asks for the delivery now: an executed plan's failed, waiting or never-asked-for delivery
   * becomes pending and due, with its attempts counted afresh. Steps already done are not done again.
   */
  async requestDelivery(planId: string): Promise<Plan> {
    const { store, clock } = this.deps;
    const plan = await store.getPlan(planId);
    if (!plan) throw new DeliverRequestError('not_found', `plan ${planId} not found`);
    if (plan.status !== 'executed') {
      throw new DeliverRequestError(
        'conflict',
        `plan ${planId} is ${plan.status}: only an executed plan is delivered`,
      );
    }
    if (!plan.workspaceCommit) {
      throw new DeliverRequestError(
        'conflict',
        `plan ${planId} executed in a directory that is no git repository: there is no branch to deliver`,
      );
    }
    if (plan.delivery?.status === 'delivered') {
      throw new DeliverRequestError('conflict', `plan ${planId} is delivered already`);
    }
    const now = clock.now();
    const ok = await store.updatePlanDelivery(planId, [null, 'off', 'failed', 'retrying', 'pending'], {
      status: 'pending',
      // Where an earlier attempt put the commit stays (the pull request's own branch, for head).
      branch: plan.delivery?.target ? plan.delivery.branch : branchFor(planId),
      attempts: 0,
      nextAttemptAt: now,
      settledAt: null,
    });
    if (!ok)
      throw new DeliverRequestError('conflict', `plan ${planId}'s delivery changed meanwhile; try again`);
    this.kick();
    return (await store.getPlan(planId))!;
  }

  /** A pass of the loop; returns the wait until the next delivery is due (at most MAX_SLEEP_MS). */
  private async loopPass(): Promise<number> {
    await this.pass().catch((err) => {
      // A pass that outlived stop()'s grace finds the store closed under it: nothing was lost (each step is
      // recorded as it completes, and an unfinished claim lapses), so that is not a failure to report.
      // An unreachable database is logged once per outage by the store.
      if (this.loop.stopped) this.deps.logger.debug({ err: String(err) }, 'delivery pass cut off by stop');
      else if (err instanceof StoreUnavailableError)
        this.deps.logger.debug({ err: String(err) }, 'delivery pass failed');
      else this.deps.logger.warn({ err: String(err) }, 'delivery pass failed');
    });
    const next = await this.deps.store.nextPlanDeliveryAt().catch(() => null);
    return next === null ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, next - this.deps.clock.now()));
  }

  /**
   * One look at the store: decide newly executed plans, then attempt what is due. The first pass of a process
   * first takes back the claims its replica held: a delivery its killed predecessor was making goes on now,
   * not once the claim lapses (each step done is recorded and skipped, the comment found by its marker).
   */
  async pass(): Promise<void> {
    const { store, clock, holder, logger } = this.deps;
    if (!this.tookBack) {
      const taken = await store.releasePlanDeliveryClaims(holder);
      this.tookBack = true;
      if (taken > 0) logger.info({ deliveries: taken }, 'took back the deliveries a previous process held');
    }
    for (;;) {
      const undecided = await store.listUndecidedPlanDeliveries(50);
      for (const plan of undecided) {
        if (this.loop.stopped) return;
        await this.decide(plan);
      }
      if (undecided.length < 50) break;
    }
    for (const id of await store.duePlanDeliveries(clock.now(), BATCH)) {
      if (this.loop.stopped) return;
      await this.attempt(id);
    }
  }

  /** An executed plan is delivered when its run options, its session or the configuration ask for it. */
  private async decide(plan: Plan): Promise<void> {
    const { store, config, clock } = this.deps;
    const [run, session] = await Promise.all([store.getRun(plan.runId), store.getSession(plan.sessionId)]);
    const wanted = run?.overrides.deliver ?? session?.defaults.deliver ?? config.delivery.enabled;
    // Nothing to push without a repository (the plan executed in place).
    const on = wanted && plan.workspaceCommit !== null;
    await store.updatePlanDelivery(
      plan.id,
      [null],
      on
        ? { status: 'pending', branch: branchFor(plan.id), attempts: 0, nextAttemptAt: clock.now() }
        : { status: 'off' },
    );
  }

  /** One attempt at a due delivery, held against other workers; every completed step is recorded at once. */
  private async attempt(planId: string): Promise<void> {
    const { store, clock, config, logger } = this.deps;
    const lease = config.delivery.push_timeout_ms + 300_000;
    const plan = await store.claimPlanDelivery(planId, clock.now(), clock.now() + lease, this.deps.holder);
    if (!plan?.delivery) return;
    const done: PlanDelivery = { ...plan.delivery };
    let target: Target | null = null;
    try {
      target = await this.target(plan);
      await this.carryOut(plan, done, target);
      const settled = await store.updatePlanDelivery(planId, ['pending', 'retrying'], {
        status: 'delivered',
        lastError: null,
        nextAttemptAt: null,
        claimedUntil: null,
        settledAt: clock.now(),
      });
      // Settled by another attempt meanwhile (a claim that lapsed): that one announces it, not this one.
      if (!settled) return;
      this.deps.onOutcome?.('delivered');
      logger.info(
        { plan_id: planId, branch: done.branch, pull_request: done.pullRequestUrl, attempts: done.attempts },
        'plan delivered',
      );
      await this.emit(plan, target.executeRun, DELIVERY_COMPLETED, {
        plan_id: planId,
        target: done.target,
        branch: done.branch,
        commit: done.commit,
        remote: done.remote,
        pull_request_url: done.pullRequestUrl,
      });
    } catch (err) {
      if (this.abort.signal.aborted) {
        // Cut off by the daemon stopping, not a failure of the delivery: given back, counted as not made.
        await store.updatePlanDelivery(planId, ['pending', 'retrying'], {
          claimedUntil: null,
          attempts: Math.max(0, done.attempts - 1),
        });
        return;
      }
      await this.failed(plan, done, target, err);
    }
  }

  private async failed(plan: Plan, done: PlanDelivery, target: Target | null, err: unknown): Promise<void> {
    const { store, clock, config, logger } = this.deps;
    const error = this.scrubbed(reasonOf(err));
    const now = clock.now();
    // Only what a retry can mend is retried (classify.ts); anything else fails at once, with its reason.
    const next =
      err instanceof PermanentDeliveryError || permanentGithubFailure(err)
        ? null
        : nextAttemptAt(
            done.attempts,
            {
              attempts: config.delivery.attempts,
              retryBaseMs: config.delivery.retry_base_ms,
              retryMaxMs: config.delivery.retry_max_ms,
            },
            now,
          );
    if (next !== null) {
      await store.updatePlanDelivery(plan.id, ['pending', 'retrying'], {
        status: 'retrying',
        lastError: error,
        nextAttemptAt: next,
        claimedUntil: null,
      });
      this.deps.onOutcome?.('retry');
      logger.warn(
        { plan_id: plan.id, attempts: done.attempts, retry_at: new Date(next).toISOString(), error },
        'plan delivery failed; retrying',
      );
      return;
    }
    await store.updatePlanDelivery(plan.id, ['pending', 'retrying'], {
      status: 'failed',
      lastError: error,
      nextAttemptAt: null,
      claimedUntil: null,
      settledAt: now,
    });
    this.deps.onOutcome?.('failed');
    logger.error({ plan_id: plan.id, attempts: done.attempts, error }, 'plan delivery failed');
    const executeRun = target?.executeRun ?? (await this.executeRunOf(plan));
    await this.emit(plan, executeRun, DELIVERY_FAILED, { plan_id: plan.id, error, attempts: done.attempts });
  }

  /**
   * The commit put where its route says (place.ts: pushed, or kept for a patch), the pull request, the comment
   * on the pull request the run came from: each skipped when an earlier attempt recorded it done.
   */
  private async carryOut(plan: Plan, done: PlanDelivery, t: Target): Promise<void> {
    const { store, config, clock, logger } = this.deps;
    const route = routeOf(t.origin, config.delivery.pr_target);
    if (t.repository && !this.deps.github && done.pushedAt === null) {
      // Not "delivered" with no pull request: nothing is pushed, and the delivery fails saying why.
      const problem = pullRequestDeliveryProblem(config);
      if (problem) throw new PermanentDeliveryError(`${t.repository}: ${problem}; nothing was pushed`);
    }
    if (route.note && done.target === null) logger.warn({ plan_id: plan.id }, route.note);
    const target = await this.withFreshCredentials(t, () =>
      place(
        {
          planId: plan.id,
          repo: t.repo,
          commit: t.commit,
          remote: t.remote,
          remoteLabel: t.remoteLabel,
          remoteOptions: this.remoteOptions(t),
          origin: t.origin,
          logger,
          now: () => clock.now(),
          record: async (patch) => {
            Object.assign(done, patch);
            await store.updatePlanDelivery(plan.id, ['pending', 'retrying'], patch);
          },
        },
        done,
        route,
      ),
    );
    const github = this.deps.github;
    if (!t.repository) return;
    if (!github) {
      if (target === 'patch') {
        throw new PermanentDeliveryError(
          "the change does not apply to the base without the pull request's commits and could only be posted as a patch, but github.token is not set",
        );
      }
      // delivery.pull_request is false (else the delivery failed before the push): the branch is all there is.
      return;
    }
    // A pull request's result goes into its branch (stacked) or its base; other runs' into base().
    const into =
      target === 'stacked' ? t.origin!.headRef : target === 'base' ? (t.origin?.baseRef ?? null) : null;
    const opens = (target === 'base' || target === 'stacked') && config.delivery.pull_request;
    if (opens && done.pullRequestUrl === null) {
      await this.openPullRequest(plan, done, t, github, into ?? (await this.base(t)));
    }
    if (t.origin && done.commentUrl === null) await this.comment(plan, done, t, github, target, into);
  }

  /** The pull request from drydock/<plan id> into `into`, with the plan and its receipts; recorded at once. */
  private async openPullRequest(
    plan: Plan,
    done: PlanDelivery,
    t: Target,
    github: GithubApi,
    into: string,
  ): Promise<void> {
    const approvers = (await this.deps.store.listDecisions(plan.id))
      .filter((d) => d.kind === 'approve')
      .map((d) => d.identity);
    const branch = done.branch ?? t.branch;
    const commit = done.commit ?? t.commit;
    const pr = await github.createPullRequest(t.repository!, {
      title: `drydock: ${planTitle(plan.markdown)}`,
      head: branch,
      base: into,
      body: pullRequestBody({
        plan,
        planRun: t.planRun,
        executeRun: t.executeRun,
        approvers: [...new Set(approvers)],
        pageUrl: this.deps.pageUrl(plan.id),
        branch,
        commit,
        // Only drydock's change, replayed onto the base: a commit other than the execution's.
        replayed: commit !== t.commit ? { from: t.commit, onto: into } : null,
      }),
    });
    const patch = { pullRequestUrl: pr.url, pullRequestNumber: pr.number };
    Object.assign(done, patch);
    await this.deps.store.updatePlanDelivery(plan.id, ['pending', 'retrying'], patch);
  }

  /**
   * The comment on the pull request the run came from: where the result went, or the patch. Read before
   * writing: the comment GitHub took from an attempt cut off before its answer counts.
   */
  private async comment(
    plan: Plan,
    done: PlanDelivery,
    t: Target,
    github: GithubApi,
    target: DeliveryTarget,
    into: string | null,
  ): Promise<void> {
    const origin = t.origin!;
    const pageUrl = this.deps.pageUrl(plan.id);
    const marker = deliveryMarker(plan.id);
    const posted = (await github.ownComments(origin.repository, origin.number)).find((c) =>
      c.body.includes(marker),
    );
    const body =
      target === 'patch'
        ? patchComment({
            planId: plan.id,
            pageUrl,
            base: origin.baseRef,
            commit: t.commit,
            patch: await commitPatch(t.repo, t.commit, PATCH_COMMENT_MAX * 4),
          })
        : pullRequestComment({
            planId: plan.id,
            pageUrl,
            target,
            branch: done.branch ?? t.branch,
            commit: done.commit ?? t.commit,
            remote: done.remote ?? t.remoteLabel,
            into,
            pullRequest:
              done.pullRequestUrl && done.pullRequestNumber !== null
                ? { url: done.pullRequestUrl, number: done.pullRequestNumber }
                : null,
          });
    const comment = posted ?? (await github.createCommentWithUrl(origin.repository, origin.number, body));
    const patch = { commentUrl: comment.url };
    Object.assign(done, patch);
    await this.deps.store.updatePlanDelivery(plan.id, ['pending', 'retrying'], patch);
  }

  /** How git reaches the remote: the push timeout, the worker's stop, and the credentials over HTTPS. */
  private remoteOptions(t: Target) {
    return {
      timeoutMs: this.deps.config.delivery.push_timeout_ms,
      signal: this.abort.signal,
      ...(t.credentials ? { credentials: t.credentials } : {}),
    };
  }

  /**
   * Runs `act` (which pushes, or reads the remote), and once more with fresh credentials when a remote on
   * GitHub refused drydock's GitHub credentials (an installation token revoked or lapsed before drydock
   * thought), as REST calls do. Each step `act` completes is recorded, so the second run goes on from there.
   */
  private async withFreshCredentials<T>(t: Target, act: () => Promise<T>): Promise<T> {
    try {
      return await act();
    } catch (err) {
      const { githubAuth } = this.deps;
      const text = (err as { stderr?: string }).stderr || String(err);
      const refused =
        githubAuth !== null &&
        t.credentialsFrom !== null &&
        t.credentials !== undefined &&
        /Authentication failed|Invalid username or (password|token)|returned error: 401/i.test(text) &&
        githubAuth.refused(t.credentialsFrom, t.credentials.password);
      if (!refused) throw err;
      t.credentials = await githubAuth!.gitCredentialsFor(t.credentialsFrom!, this.abort.signal);
      return act();
    }
  }

  /** The base branch: the pull request's, else the configured one, else the remote's default branch. */
  private async base(t: Target): Promise<string> {
    if (t.origin) return t.origin.baseRef;
    if (this.deps.config.delivery.base_branch) return this.deps.config.delivery.base_branch;
    const found = await remoteDefaultBranch(t.repo, t.remote, this.remoteOptions(t)).catch(
      (err: Error & { stderr?: string }) => {
        const detail = (err.stderr || err.message).trim();
        throw remoteFailure(`could not read ${t.remoteLabel}'s default branch: ${detail}`, detail);
      },
    );
    if (!found) {
      throw new PermanentDeliveryError(`${t.remoteLabel} names no default branch: set delivery.base_branch`);
    }
    return found;
  }

  private async target(plan: Plan): Promise<Target> {
    const { store, config } = this.deps;
    const session: Session | null = await store.getSession(plan.sessionId);
    if (!session) throw new PermanentDeliveryError(`session ${plan.sessionId} no longer exists`);
    const repo = session.workspace;
    const branch = branchFor(plan.id);
    const commit = await branchCommit(repo, branch);
    if (!commit) {
      throw new PermanentDeliveryError(`the local branch ${branch} no longer exists in ${repo}`);
    }
    const remote = config.delivery.remote;
    if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(remote)) {
      throw new PermanentDeliveryError(`delivery.remote "${remote}" is not a git remote name`);
    }
    const url = await remoteUrl(repo, remote).catch((err: Error & { stderr?: string }) => {
      const detail = (err.stderr || err.message).trim();
      if (/No such remote/i.test(detail)) {
        throw new PermanentDeliveryError(
          `the repository ${repo} has no remote named ${remote}: add one (git -C ${repo} remote add ${remote} <url>) or set delivery.remote to a remote it has`,
        );
      }
      throw new Error(`could not read the remote ${remote} of ${repo}: ${detail}`);
    });
    const { credentials, from: credentialsFrom } = await this.credentialsFor(url);
    const runs = await store.listPlanRuns(plan);
    const planRun = runs.find((r) => r.id === plan.runId) ?? null;
    const executeRun = runs.filter((r) => r.executesPlanId === plan.id).pop() ?? null;
    const origin = await pullRequestOf(store, planRun);
    const repository =
      origin?.repository ??
      (await githubRepositoryOfPath(repo, config.github.repositories)) ??
      githubRepositoryOfUrl(url, githubHosts(config.github.api_url));
    return {
      repo,
      branch,
      commit,
      remote,
      remoteLabel: `${remote} ${withoutCredentials(url)}`,
      credentials,
      credentialsFrom,
      repository,
      origin,
      planRun,
      executeRun,
    };
  }

  /**
   * What git answers over HTTP(S) when the remote asks (through GIT_ASKPASS): delivery.token, sent to whatever
   * remote it is configured for; else, for a remote on GitHub (github.com or api_url's host), drydock's GitHub
   * credentials for that repository (an App's installation token of the repository's installation); else none.
   * A GitHub credential never goes to another host.
   */
  private async credentialsFor(
    url: string,
  ): Promise<{ credentials: GitCredentials | undefined; from: string | null }> {
    const none = { credentials: undefined, from: null };
    if (!/^https?:\/\//i.test(url)) return none;
    const { config, githubAuth } = this.deps;
    if (config.delivery.token) {
      return {
        credentials: { username: config.delivery.username, password: config.delivery.token },
        from: null,
      };
    }
    const repository = githubRepositoryOfUrl(url, githubHosts(config.github.api_url));
    if (!repository || !githubAuth) return none;
    return {
      credentials: await githubAuth.gitCredentialsFor(repository, this.abort.signal),
      from: repository,
    };
  }

  private async executeRunOf(plan: Plan): Promise<Run | null> {
    const runs = await this.deps.store.listPlanRuns(plan).catch(() => [] as Run[]);
    return runs.filter((r) => r.executesPlanId === plan.id).pop() ?? null;
  }

  private async emit<K extends typeof DELIVERY_COMPLETED | typeof DELIVERY_FAILED>(
    plan: Plan,
    executeRun: Run | null,
    type: K,
    data: RunEventMap[K],
  ) {
    await this.deps.events
      .emit(executeRun?.id ?? plan.runId, type, data)
      .catch((err) =>
        this.deps.logger.warn({ plan_id: plan.id, err: String(err) }, `could not record ${type}`),
      );
  }

  private scrubbed(text: string): string {
    const { config } = this.deps;
    return scrub(text, [
      config.delivery.token,
      config.github.token,
      ...(this.deps.githubAuth?.secrets() ?? []),
    ]);
  }
}

/** A failure's message, and for a GitHub call that failed for good what to do about it. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (!(err instanceof GithubCallError) || !permanentGithubFailure(err)) return message;
  const hint = githubFailureHint(err);
  return hint ? `${message}; ${hint}` : message;
}
