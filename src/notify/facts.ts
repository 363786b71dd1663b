import type { Config } from '../config/schema.js';
import type { Decision, Plan, Run } from '../domain/types.js';
import { githubGitUrl, githubRepositoryOfPath } from '../github/target.js';
import { type PlanSource, planSource, roundPlans, runSource } from '../plans/plan-context.js';
import type {
  ApprovalStore,
  JobStore,
  PlanStore,
  RunStore,
  SessionStore,
  TriggerStore,
} from '../store/store.js';

// What a notification says about where its plan or run came from, beside the event itself: the repository,
// the pull request, the job or trigger, who asked, who decided and what it cost. Read from the store when the
// event is collected (so a later retry sends the same bytes); announce.ts stays pure and maps it into the
// payload.

export type FactsStore = ApprovalStore & JobStore & PlanStore & RunStore & SessionStore & TriggerStore;

/** The settings the facts read: GitHub's web host and the configured clones. Absent: no GitHub. */
export type FactsConfig = { github?: Pick<Config['github'], 'api_url' | 'repositories'> };

export interface Facts {
  /** owner/repo when the work is on GitHub (a pull request's, or a configured clone's), else the workspace path. */
  repository: string | null;
  /** The session's workspace: the directory drydock works in. */
  workspace: string | null;
  /** The pull request the work came from (a run a pull_request event started, or its later rounds). */
  pullRequest: { repository: string; number: number; url: string } | null;
  job: { id: string; name: string | null } | null;
  trigger: { id: string; name: string | null } | null;
  requestedBy: string | null;
  /** The plan's decisions, oldest first ([] without a plan). */
  decisions: Decision[];
  /** What the planning rounds cost so far, and the execution once it ended (USD). */
  cost: { planUsd: number | null; executionUsd: number | null };
}

export const NO_FACTS: Facts = {
  repository: null,
  workspace: null,
  pullRequest: null,
  job: null,
  trigger: null,
  requestedBy: null,
  decisions: [],
  cost: { planUsd: null, executionUsd: null },
};

/** The facts of an event about `run` and (when there is one) `plan`. */
export async function gatherFacts(
  store: FactsStore,
  config: FactsConfig,
  run: Run | null,
  plan: Plan | null,
): Promise<Facts> {
  // A revision round's question is about the plan it revises: its source is that plan's first round.
  const about = plan ?? (run?.revisesPlanId ? await store.getPlan(run.revisesPlanId) : null);
  const source = about ? await planSource(store, about) : run ? await runSource(store, run) : null;
  const sessionId = about?.sessionId ?? run?.sessionId;
  const session = sessionId ? await store.getSession(sessionId) : null;
  const workspace = session?.workspace ?? null;
  const pullRequest = source?.pullRequest ? pullRequestOf(source.pullRequest, config) : null;
  const job = source?.job ? await store.getJob(source.job.id) : null;
  return {
    repository: pullRequest?.repository ?? (await repositoryOf(workspace, run, config)),
    workspace,
    pullRequest,
    job: source?.job ? { id: source.job.id, name: job?.name ?? null } : null,
    trigger: source?.trigger ? { id: source.trigger.id, name: source.trigger.name } : null,
    requestedBy: source?.requestedBy ?? run?.requestedBy ?? null,
    decisions: plan ? await store.listDecisions(plan.id) : [],
    cost: await costOf(store, run, plan),
  };
}

/** The pull request's page: the address GitHub's event gave, else the one of GitHub's web host. */
function pullRequestOf(pr: NonNullable<PlanSource['pullRequest']>, config: FactsConfig) {
  const web = githubGitUrl(config.github?.api_url ?? 'https://api.github.com', null);
  return {
    repository: pr.repository,
    number: pr.number,
    url: pr.url ?? `${web}/${pr.repository}/pull/${pr.number}`,
  };
}

/** owner/repo of a commit a GitHub event named, or of the configured clone holding the workspace; else its path. */
async function repositoryOf(workspace: string | null, run: Run | null, config: FactsConfig) {
  if (run?.checkout) return run.checkout.repository;
  if (!workspace) return null;
  return (await githubRepositoryOfPath(workspace, config.github?.repositories ?? {})) ?? workspace;
}

/**
 * The planning cost: the runs that proposed each round of the plan (or the planning run alone, without a
 * plan yet). The execution's: its execute run's, once that ended.
 */
async function costOf(store: FactsStore, run: Run | null, plan: Plan | null): Promise<Facts['cost']> {
  if (!plan) {
    const planning = run && run.phase === 'plan' ? run.costUsd : null;
    const execution = run && run.phase === 'execute' && run.finishedAt !== null ? run.costUsd : null;
    return { planUsd: planning, executionUsd: execution };
  }
  let planUsd = 0;
  for (const round of await roundPlans(store, plan))
    planUsd += (await store.getRun(round.runId))?.costUsd ?? 0;
  const execute = (await store.listPlanRuns(plan)).filter((r) => r.executesPlanId === plan.id).pop();
  return {
    planUsd: roundUsd(planUsd),
    executionUsd: execute && execute.finishedAt !== null ? roundUsd(execute.costUsd) : null,
  };
}

/** Dollars to a millionth: no float noise (0.30000000000000004) in a payload. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
