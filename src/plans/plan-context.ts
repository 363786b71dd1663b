import type {
  ConversationMessage,
  Decision,
  Plan,
  PlanStatus,
  PullRequestCheckout,
  Question,
  QuestionStatus,
  Run,
  RunStatus,
  TokenUsage,
  TriggerKind,
  WebhookOutcome,
} from '../domain/types.js';
import type { ApprovalStore, JobStore, PlanStore, RunStore, Store, TriggerStore } from '../store/store.js';
import { type McpActivity, mcpActivity } from './mcp-activity.js';
import { type DiffHunk, diffHunks, diffLines } from './text-diff.js';
import { tallyToolUses } from './tool-tally.js';

// Everything an approver needs beside the plan text, gathered from the store: where the work came from,
// what the agent looked at and asked, what planning cost, the decisions so far, and what changed since the
// previous round. Read-only; the HTTP, page and CLI layers only present it.
//
// Several fields are external (marked): they come from a webhook payload, a trigger's caller or the model.
// They are returned as data; whoever shows them escapes them.

/** How far back the rounds of one plan are followed (a guard against a malformed chain, not a policy). */
const MAX_ROUNDS = 100;
/** Questions read per planning run. */
const MAX_QUESTIONS = 100;

export type SourceKind = 'job' | 'trigger' | 'pull_request' | 'manual';

export interface PullRequestSource {
  repository: string;
  number: number;
  /** External. */
  title: string | null;
  /** External: the pull request's description, as the model read it in the run's prompt. */
  body: string | null;
  /** External. The pull request's page; only an http(s) URL is kept. */
  url: string | null;
  /** External. */
  author: string | null;
  headRef: string;
  baseRef: string;
  headSha: string;
  /**
   * GitHub's pull_request payload has it (`pull_request.base.sha`, next to `head.sha`, `html_url` and
   * `user.login`: GitHub's REST description, PullRequestWebhook, as published in
   * https://docs.rs/crate/openapi-github/latest/source/docs/PullRequestWebhook.md), but the trigger does not
   * record it in the run's checkout and the payload is dropped once handled: null until it does.
   */
  baseSha: string | null;
  draft: boolean | null;
  /** External. */
  labels: string[];
}

export interface PlanSource {
  kind: SourceKind;
  /** The run of round 1: what started the work. */
  runId: string;
  requestedBy: string;
  /** The instructions the agent was given: the job's prompt or the trigger's template, filled in. */
  prompt: string;
  job: {
    id: string;
    /** False when the job is gone (a one-shot after it fired, a closed session). */
    exists: boolean;
    cron: string | null;
    timezone: string | null;
    /** The nominal slot the run was started for; null for a run started by hand. */
    slotAt: number | null;
    coalescedSlots: number;
  } | null;
  trigger: { id: string; name: string | null; kind: TriggerKind | null; exists: boolean } | null;
  delivery: {
    id: string;
    source: 'github' | 'fire';
    /** X-GitHub-Delivery or the caller's idempotency key. */
    key: string;
    event: string;
    outcome: WebhookOutcome;
    receivedAt: number;
  } | null;
  /** External: the text a trigger was fired with. */
  firedText: string | null;
  pullRequest: PullRequestSource | null;
}

export interface PlanRound {
  round: number;
  planId: string;
  runId: string;
  status: PlanStatus;
  createdAt: number;
  /** The revision request that ended this round (external: a person's words). */
  feedback: { identity: string; comment: string | null; at: number } | null;
}

export type SearchTool = 'Read' | 'Grep' | 'Glob';

/** One distinct Read, Grep or Glob of the planning runs (identical calls counted, not repeated). */
export interface FileActivity {
  tool: SearchTool;
  /** External (model output): the file read, or the directory searched. */
  path: string | null;
  /** External: the Grep regular expression or the Glob pattern. */
  pattern: string | null;
  /** External: Grep's file filter. */
  glob: string | null;
  /** The round that first made this call. */
  round: number;
  calls: number;
  /** Calls that answered with an error (no such file, outside the workspace...). */
  errors: number;
}

export interface AskedQuestion {
  id: string;
  runId: string;
  round: number;
  status: QuestionStatus;
  createdAt: number;
  resolvedAt: number | null;
  answeredBy: string | null;
  /** External: the model's questions, and the answers people gave. */
  items: {
    question: string;
    header: string | null;
    multiSelect: boolean;
    options: string[];
    answer: string | string[] | null;
  }[];
}

export interface RunUsage {
  round: number;
  runId: string;
  status: RunStatus;
  model: string | null;
  turns: number;
  usage: TokenUsage;
  costUsd: number;
}

export interface PlanDiff {
  previousPlanId: string;
  previousRound: number;
  added: number;
  removed: number;
  hunks: DiffHunk[];
}

export interface PlanContext {
  source: PlanSource | null;
  rounds: PlanRound[];
  files: FileActivity[];
  /** The MCP calls of the planning runs (mcp-activity.ts). */
  mcpCalls: McpActivity[];
  questions: AskedQuestion[];
  /** The planning runs of every round up to this one, and their sum. */
  cost: { runs: RunUsage[]; total: { turns: number; usage: TokenUsage; costUsd: number } };
  decisions: Decision[];
  /** This round's plan against the previous round's; null in round 1. */
  diff: PlanDiff | null;
}

/** The plans of this plan's rounds, oldest first, ending with the plan itself. */
export async function roundPlans(
  store: ApprovalStore & JobStore & PlanStore & RunStore & TriggerStore,
  plan: Plan,
): Promise<Plan[]> {
  const chain = [plan];
  let current = plan;
  while (current.previousPlanId && chain.length < MAX_ROUNDS) {
    const previous = await store.getPlan(current.previousPlanId);
    if (!previous || chain.some((p) => p.id === previous.id)) break;
    chain.unshift(previous);
    current = previous;
  }
  return chain;
}

/** Where a plan's work came from. `cache` lets a listing share trigger and job lookups between rows. */
export async function planSource(
  store: ApprovalStore & JobStore & PlanStore & RunStore & TriggerStore,
  plan: Plan,
  cache: SourceCache = new SourceCache(store),
): Promise<PlanSource | null> {
  const first = plan.previousPlanId ? (await roundPlans(store, plan))[0]! : plan;
  const run = await store.getRun(first.runId);
  if (!run) return null;
  return sourceOf(run, cache);
}

/** Where a run's work came from (a run that proposed no plan yet). */
export async function runSource(
  store: ApprovalStore & JobStore & PlanStore & RunStore & TriggerStore,
  run: Run,
): Promise<PlanSource> {
  return sourceOf(run, new SourceCache(store));
}

/** Jobs, triggers and deliveries looked up once per page. */
export class SourceCache {
  private readonly jobs = new Map<string, Promise<Awaited<ReturnType<Store['getJob']>>>>();
  private readonly triggers = new Map<string, Promise<Awaited<ReturnType<Store['getTrigger']>>>>();

  constructor(readonly store: ApprovalStore & JobStore & PlanStore & RunStore & TriggerStore) {}

  job(id: string) {
    if (!this.jobs.has(id)) this.jobs.set(id, this.store.getJob(id));
    return this.jobs.get(id)!;
  }

  trigger(id: string) {
    if (!this.triggers.has(id)) this.triggers.set(id, this.store.getTrigger(id));
    return this.triggers.get(id)!;
  }
}

async function sourceOf(run: Run, cache: SourceCache): Promise<PlanSource> {
  const untrusted = untrustedData(run.prompt);
  const [job, trigger, delivery] = await Promise.all([
    run.jobId ? cache.job(run.jobId) : null,
    run.triggerId ? cache.trigger(run.triggerId) : null,
    run.deliveryId ? cache.store.getWebhookDelivery(run.deliveryId) : null,
  ]);
  const triggerId = run.triggerId ?? job?.triggerId ?? null;
  const triggerRow = trigger ?? (triggerId ? await cache.trigger(triggerId) : null);
  const pullRequest =
    run.checkout && run.checkout.kind !== 'commit' ? pullRequestOf(run.checkout, untrusted) : null;
  const kind: SourceKind = pullRequest
    ? 'pull_request'
    : run.deliveryId || (run.triggerId && !run.jobId)
      ? 'trigger'
      : run.jobId
        ? 'job'
        : 'manual';
  const fired = untrusted && typeof untrusted.text === 'string' ? untrusted.text : null;
  return {
    kind,
    runId: run.id,
    requestedBy: run.requestedBy,
    prompt: untrusted ? instructionsOf(run.prompt) : run.prompt,
    job: run.jobId
      ? {
          id: run.jobId,
          exists: job !== null,
          cron: job?.cron ?? null,
          timezone: job?.timezone ?? null,
          slotAt: run.slotAt,
          coalescedSlots: run.coalescedSlots,
        }
      : null,
    trigger: triggerId
      ? {
          id: triggerId,
          name: triggerRow?.name ?? null,
          kind: triggerRow?.kind ?? null,
          exists: triggerRow !== null,
        }
      : null,
    delivery: delivery
      ? {
          id: delivery.id,
          source: delivery.source,
          key: delivery.key,
          event: delivery.event,
          outcome: delivery.outcome,
          receivedAt: delivery.receivedAt,
        }
      : null,
    firedText: fired,
    pullRequest,
  };
}

// The run's prompt of a trigger ends with the external data as JSON inside <untrusted_data> (written by
// `untrustedBlock` in src/triggers/template.ts; tests/plans/plan-context.test.ts holds the two in step). The JSON
// has every <, > and & escaped, so the block's real opening tag is the last one in the prompt.
const OPEN = '<untrusted_data source="external">';
const CLOSE = '</untrusted_data>';

/** The external data of a trigger run's prompt, or null when it has none (or it does not parse). */
export function untrustedData(prompt: string): Record<string, unknown> | null {
  const start = prompt.lastIndexOf(OPEN);
  if (start < 0) return null;
  const end = prompt.indexOf(CLOSE, start);
  const block = prompt.slice(start + OPEN.length, end < 0 ? undefined : end);
  const json = block.indexOf('\n{');
  if (json < 0) return null;
  try {
    const data: unknown = JSON.parse(block.slice(json + 1));
    return data && typeof data === 'object' && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A trigger run's prompt without its external-data block: the instructions the team wrote. */
export function instructionsOf(prompt: string): string {
  const start = prompt.lastIndexOf(OPEN);
  return (start < 0 ? prompt : prompt.slice(0, start)).trimEnd();
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Only links a browser may follow without running anything: http and https. */
export function httpUrl(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

function pullRequestOf(c: PullRequestCheckout, untrusted: Record<string, unknown> | null): PullRequestSource {
  const pr = untrusted?.pull_request;
  const data = pr && typeof pr === 'object' ? (pr as Record<string, unknown>) : {};
  return {
    repository: c.repository,
    number: c.number,
    title: text(data.title),
    body: text(data.body),
    url: httpUrl(data.url),
    author: text(data.author),
    headRef: c.headRef,
    baseRef: c.baseRef,
    headSha: c.headSha,
    baseSha: c.baseSha ?? null,
    draft: typeof data.draft === 'boolean' ? data.draft : null,
    labels: Array.isArray(data.labels) ? data.labels.filter((l): l is string => typeof l === 'string') : [],
  };
}

/** The whole context of one plan. */
export async function planContext(
  store: ApprovalStore & JobStore & PlanStore & RunStore & TriggerStore,
  plan: Plan,
): Promise<PlanContext> {
  const chain = await roundPlans(store, plan);
  const [source, decisions, runs, conversation, roundDecisions] = await Promise.all([
    store.getRun(chain[0]!.runId).then((run) => (run ? sourceOf(run, new SourceCache(store)) : null)),
    store.listDecisions(plan.id),
    Promise.all(chain.map((p) => store.getRun(p.runId))),
    store.loadConversation(plan.conversationId),
    Promise.all(chain.slice(0, -1).map((p) => store.listDecisions(p.id))),
  ]);
  const roundOf = new Map(chain.map((p) => [p.runId, p.round]));
  const rounds: PlanRound[] = chain.map((p, i) => {
    const revise = (roundDecisions[i] ?? []).find((d) => d.kind === 'revise');
    return {
      round: p.round,
      planId: p.id,
      runId: p.runId,
      status: p.status,
      createdAt: p.createdAt,
      feedback: revise ? { identity: revise.identity, comment: revise.comment, at: revise.createdAt } : null,
    };
  });
  const planRuns = runs.filter((r): r is Run => r !== null);
  const questions = (
    await Promise.all(planRuns.map((r) => store.listQuestions({ runId: r.id, limit: MAX_QUESTIONS })))
  ).flat();

  const usage: RunUsage[] = planRuns.map((r) => ({
    round: roundOf.get(r.id) ?? 0,
    runId: r.id,
    status: r.status,
    model: r.model,
    turns: r.turns,
    usage: r.usage,
    costUsd: r.costUsd,
  }));
  const total = { turns: 0, usage: {} as TokenUsage, costUsd: 0 };
  for (const u of usage) {
    total.turns += u.turns;
    total.costUsd += u.costUsd;
    for (const [k, n] of Object.entries(u.usage) as [keyof TokenUsage, number | undefined][])
      total.usage[k] = (total.usage[k] ?? 0) + (n ?? 0);
  }

  const previous = chain.length > 1 ? chain[chain.length - 2]! : null;
  let diff: PlanDiff | null = null;
  if (previous && previous.id === plan.previousPlanId) {
    const lines = diffLines(previous.markdown, plan.markdown);
    diff = {
      previousPlanId: previous.id,
      previousRound: previous.round,
      added: lines.filter((l) => l.op === 'add').length,
      removed: lines.filter((l) => l.op === 'remove').length,
      hunks: diffHunks(lines),
    };
  }

  return {
    source,
    rounds,
    files: fileActivity(conversation, roundOf),
    mcpCalls: mcpActivity(conversation, roundOf),
    questions: questions
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((q) => askedQuestion(q, roundOf.get(q.runId) ?? 0)),
    cost: { runs: usage, total },
    decisions,
    diff,
  };
}

/**
 * The Read, Grep and Glob calls of the planning runs, from the stored conversation: the tool_use blocks of
 * the assistant messages those runs wrote, and whether the matching tool_result was an error.
 */
export function fileActivity(messages: ConversationMessage[], roundOf: Map<string, number>): FileActivity[] {
  return tallyToolUses(messages, roundOf, ({ name, input: raw }) => {
    if (name !== 'Read' && name !== 'Grep' && name !== 'Glob') return null;
    const input = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const tool = name as SearchTool;
    const path = text(tool === 'Read' ? input.file_path : input.path);
    const pattern = tool === 'Read' ? null : text(input.pattern);
    const glob = tool === 'Grep' ? text(input.glob) : null;
    return { key: JSON.stringify([tool, path, pattern, glob]), entry: { tool, path, pattern, glob } };
  });
}

function askedQuestion(q: Question, round: number): AskedQuestion {
  const raw = (q.questions as { questions?: unknown })?.questions ?? q.questions;
  const list = Array.isArray(raw) ? raw : [];
  return {
    id: q.id,
    runId: q.runId,
    round,
    status: q.status,
    createdAt: q.createdAt,
    resolvedAt: q.resolvedAt,
    answeredBy: q.answeredBy,
    items: list.map((item) => {
      const o = (item && typeof item === 'object' ? item : {}) as Record<string, unknown>;
      const question = text(o.question) ?? '';
      const options = Array.isArray(o.options)
        ? o.options.map((x) => text((x as { label?: unknown })?.label)).filter((x): x is string => x !== null)
        : [];
      const answer = q.answers && Object.hasOwn(q.answers, question) ? q.answers[question]! : null;
      return { question, header: text(o.header), multiSelect: o.multiSelect === true, options, answer };
    }),
  };
}
