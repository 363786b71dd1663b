import { existsSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import type { SpendCaps } from '../caps/spend-caps.js';
import type { ConversationFrame } from '../domain/frame.js';
import { mcpServersOf } from '../domain/mcp-selection.js';
import type { PlanRecorder } from '../domain/plan-status.js';
import { type SpendCapHit, spendCapDetails, spendCapMessage } from '../domain/spend.js';
import type {
  ConversationMessage,
  Question,
  Run,
  RunCheckout,
  RunSettings,
  Session,
  TokenUsage,
} from '../domain/types.js';
import { newId } from '../ids.js';
import { findModel, type ResolvedModel } from '../models/catalogue.js';
import {
  classifyModelError,
  type ModelErrorKind,
  ModelUnavailable,
  retryDelay,
  SpendLimitReached,
} from '../models/errors.js';
import { lifecycleMessage, modelState } from '../models/lifecycle.js';
import { addUsage, costOf, promptTokensOf, tokensOf } from '../models/pricing.js';
import { type Hold, holdingStore } from '../runs/holding.js';
import { RunAborted, type RunHandler, type RunOutcome, type RunStart } from '../runs/queue.js';
import { FencedError, type PlanStore, type RunStore, StoreUnavailableError } from '../store/store.js';
import { checkoutPullRequest } from '../workspace/checkout.js';
import { checkoutPath, workRoot } from '../workspace/paths.js';
import { cachedCommit, checkoutWants } from '../workspace/repo-cache.js';
import { cacheTtls } from './cache-ttl.js';
import { ExecutePhase } from './execute-phase.js';
import { conversationFrame } from './frame.js';
import type { McpConnector } from './mcp/index.js';
import { mcpStartFailed } from './mcp-calls.js';
import { mcpFramed, RunMcp } from './mcp-run.js';
import { PARKED, type Phase, type PhaseDeps, type ToolResultBlock, type ToolUse } from './phase.js';
import { PlanPhase } from './plan-phase.js';
import { type PlanningTree, planningHidden, planningTree, removePlanningTree } from './planning-base.js';
import {
  CALL_CUT_OFF,
  NOT_RUN_AFTER_PLAN,
  QUESTION_TIMED_OUT,
  questionAnswered,
  REPLY_CUT_OFF,
} from './prompt.js';
import { buildRequest } from './request.js';
import { resolveSettings } from './settings.js';
import { parkedCall, refuseRepeatedId } from './tool-calls.js';
import { validateQuestions } from './tools/plan-tools.js';
import { type TurnProse, turnProse } from './tools/turn-prose.js';
import type { ToolResult } from './tools/types.js';
import { Workspace } from './tools/workspace.js';

export interface AgentDeps extends Omit<PhaseDeps, 'lifecycle' | 'mcp'> {
  /** Starts the MCP servers a run chose (src/mcp/); absent: a run that chose some fails. */
  mcpConnector?: McpConnector | undefined;
  /** The Messages API client (the real SDK; tests point it at a local server). */
  model: Anthropic;
  /** The plan service, made again on a run's own view of the store (see AgentRunner.execute). */
  lifecycle: { on(store: PlanStore & RunStore): PlanRecorder };
  /** Each failed request to the model, by kind (the `drydock_model_errors` metric). */
  onModelError?: (kind: ModelErrorKind) => void;
  /** Spend caps: a run whose trigger, session or daemon crossed its daily_usd parks before its next request. */
  caps?: Pick<SpendCaps, 'crossed'> | undefined;
}

type RunDeps = PhaseDeps & Pick<AgentDeps, 'model' | 'onModelError' | 'caps'>;

class BudgetExceeded extends Error {}

/** A daily_usd cap crossed (by this run's last turn, or another run's): the run waits until the day resets. */
class SpendCapCrossed extends Error {
  constructor(readonly hit: SpendCapHit) {
    super(spendCapMessage(hit));
  }
}

/** A failure of drydock's own (storing an event) while a reply streamed in: never a reason to ask again. */
class NotTheModel extends Error {
  constructor(override readonly cause: unknown) {
    super('not a model failure');
  }
}

interface LoopContext {
  run: Run;
  phase: Phase;
  /** The conversation's system texts and tools, the same for every request of it (frame.ts). */
  frame: ConversationFrame;
  settings: RunSettings;
  model: ResolvedModel;
  conversationId: string;
  state: { turns: number; usage: TokenUsage; costUsd: number; lastTurnUsd: number };
  signal: AbortSignal;
  /** The refusal details of the last reply, when it was one. */
  refusal: { category: string | null; explanation: string | null } | null;
}

const SPEND_LIMIT_HELD =
  'the account is at its spend limit (another run met it): no request was sent; the run waits until an admin resumes it (`drydock runs resume`) or anthropic.spend_limit_wait_ms passes';

/** What one reply leads to: the run's end, or the next user message; null: ask the model again. */
type Step = { end: RunOutcome } | { next: ConversationMessage } | null;

/** What the loop counts across replies: whether the phase reminded the model, pause_turn replies in a row. */
interface InARow {
  reminded: boolean;
  pauses: number;
}

const failed = (error: string): Step => ({ end: { status: 'failed', error } });

function isPhase(p: Phase | RunOutcome): p is Phase {
  return p instanceof ExecutePhase || p instanceof PlanPhase;
}

/** Checked by date at every run start: a model that retired while the daemon ran is not sent a request. */
function unusableModel(settings: RunSettings, model: ResolvedModel, now: number): RunOutcome | null {
  const lifecycle = lifecycleMessage(settings.model, modelState(model, now));
  if (lifecycle?.level === 'error') {
    const error = `${lifecycle.text}. No request was sent: set the model of the session, job or trigger`;
    return { status: 'failed', error };
  }
  if (!model.priced) {
    return {
      status: 'failed',
      error: `no price for model ${settings.model}: add models.${settings.model}.price to the configuration (docs/models.md)`,
    };
  }
  return null;
}

/** Replies cut off at max_tokens in a row before the run gives up. */
const MAX_CUT_OFF_IN_A_ROW = 3;
/** pause_turn continuations in a row before the run gives up. */
const MAX_PAUSES_IN_A_ROW = 5;

/**
 * drydock's agent loop over `messages.stream`, shared by the plan and the execute phase. Each turn: build
 * the request (the phase's tools only), stream the answer into the event log, store the assistant
 * message, run its tool calls through the phase's gate, store the results. The stored conversation is
 * the state: a run resumed after a restart or an answer picks up from its last stored message.
 */
export class AgentRunner implements RunHandler {
  constructor(private readonly deps: AgentDeps) {}

  /**
   * Carries out `run` while the queue holds its claim: everything the run writes (its conversation, events,
   * call journal, questions, approvals, plan) goes through the store as `hold` sees it (holdingStore): fenced
   * by the claim, riding out short database outages.
   */
  execute(run: Run, hold: Hold, from: RunStart = 'queued'): Promise<RunOutcome> {
    const store = holdingStore(this.deps.store, hold);
    // The run's MCP servers live while this call does: closed when the run ends, parks or is aborted.
    const mcp = new RunMcp(this.deps.mcpConnector, run.id, hold.signal);
    const deps: RunDeps = {
      ...this.deps,
      store,
      events: this.deps.events.fenced(store, hold.fence),
      lifecycle: this.deps.lifecycle.on(store),
      mcp,
    };
    return new AgentRun(deps).execute(run, hold.signal, from).finally(() => mcp.close());
  }
}

/** One run's loop, on that run's own dependencies. */
class AgentRun {
  constructor(private readonly deps: RunDeps) {}

  async execute(run: Run, signal: AbortSignal, from: RunStart): Promise<RunOutcome> {
    const { store, config, clock } = this.deps;
    const session = await store.getSession(run.sessionId);
    if (!session) return { status: 'failed', error: `session ${run.sessionId} no longer exists` };
    const settings = resolveSettings(run, session, config);
    this.deps.mcp.choose(mcpServersOf(run.overrides, session.defaults));
    const model = findModel(config, settings.model);
    const refused = unusableModel(settings, model, clock.now());
    if (refused) return refused;
    // An execution taken from the queue that has begun before (its replica stopped or died midway) starts
    // over: a conversation of its own from the approved plan, in a worktree made again. Never from the files
    // and the conversation half a run left. A plan-phase run goes on from its stored conversation: it changed
    // nothing. One resumed after an answer or a tool approval goes on where it parked.
    const startOver =
      run.phase === 'execute' &&
      from === 'queued' &&
      (await store.loadConversation(run.conversationId ?? run.id)).some((m) => m.runId === run.id);
    const conversationId = startOver
      ? `${run.id}.${clock.now().toString(36)}`
      : (run.conversationId ?? run.id);
    await store.updateRun(run.id, { conversationId, model: settings.model, settings });

    const phase = await this.openPhase(run, session, signal, startOver, conversationId);
    if (!isPhase(phase)) return phase;
    const messages = await store.loadConversation(conversationId);
    let frame: ConversationFrame;
    try {
      // A new conversation lists the MCP tools of the run's servers after the phase's own (mcp-run.ts).
      frame = await conversationFrame(
        store,
        mcpFramed(phase, this.deps.mcp, run.phase),
        { conversationId, runId: run.id, now: clock.now() },
        messages,
      );
      await this.deps.mcp.adopt(frame.tools);
    } catch (err) {
      const failed = await mcpStartFailed(this.deps, run.id, err);
      if (failed) return phase.finish(failed);
      throw err;
    }
    await phase.adopt?.(frame);
    const state = { turns: run.turns, usage: run.usage as TokenUsage, costUsd: run.costUsd, lastTurnUsd: 0 };
    const ctx: LoopContext = {
      run,
      phase,
      frame,
      settings,
      model,
      conversationId,
      state,
      signal,
      refusal: null,
    };
    const ended = await this.begin(ctx, messages);
    if (ended) return phase.finish(ended);
    return phase.finish(await this.loopToOutcome(ctx, messages));
  }

  /** The run's phase: the execute phase in its worktree, or the plan phase in the workspace (or a PR's). */
  private async openPhase(
    run: Run,
    session: Session,
    signal: AbortSignal,
    startOver: boolean,
    conversationId: string,
  ): Promise<Phase | RunOutcome> {
    if (run.phase === 'execute') return ExecutePhase.open(this.deps, run, session, signal, startOver);
    let workspace: Workspace;
    let tree: PlanningTree | null = null;
    try {
      // A pull request run plans in a worktree at the PR's head, not in the clone's checkout; a git
      // workspace's run in a clean checkout of the commit its execution starts from (planning-base.ts).
      if (!run.checkout) tree = await planningTree(this.deps, run, session);
      const root = run.checkout
        ? await this.pullRequestCheckout(run.checkout, run.id)
        : (tree?.root ?? session.workspace);
      // An absolute path of the session's workspace the model copied (from the task, say) means the same file
      // of the checkout: never the working tree's.
      const hidden = tree ? planningHidden(this.deps.hidden, tree) : this.deps.hidden;
      workspace = await Workspace.open(root, hidden, tree ? session.workspace : undefined);
    } catch (err) {
      if (tree) await removePlanningTree(tree);
      return { status: 'failed', error: `workspace cannot be prepared: ${(err as Error).message}` };
    }
    return new PlanPhase(this.deps, run, session, workspace, conversationId, signal, tree);
  }

  /**
   * The worktree a pull request run plans in. On a repository cloned on demand (workspace/repo-cache.ts) the
   * pull request's refs are fetched into the cache first, unless the worktree is there already (a run that
   * resumes).
   */
  private async pullRequestCheckout(c: RunCheckout, runId: string): Promise<string> {
    const path = checkoutPath(workRoot(this.deps.config), runId);
    const cache = this.deps.repoCache;
    let checkout = c;
    if (cache?.holds(c.repository, c.clone) && !existsSync(path)) {
      await cache.prepare(c.repository, checkoutWants(c));
      // An event that names a branch or tag only: the commit it points at now, as the fetch just brought it
      // (the cache's origin takes credentials the checkout's own fetch does not have).
      if (c.kind === 'commit' && c.sha === null && c.ref)
        checkout = { ...c, sha: await cachedCommit(c.clone, c.ref) };
    }
    return checkoutPullRequest(checkout, path);
  }

  /**
   * Starts the run's part of the conversation, or says it resumed: run_started with this run's instruction
   * appended, or run_resumed. An outcome when the run already ended before (the phase says so).
   */
  private async begin(ctx: LoopContext, messages: ConversationMessage[]): Promise<RunOutcome | null> {
    const { store, events, clock } = this.deps;
    const { run, phase, settings, conversationId, frame } = ctx;
    const started = { phase: run.phase, model: settings.model, attempt: run.attempt };
    if (messages.some((m) => m.runId === run.id)) {
      await events.emit(run.id, 'run_resumed', started);
      return phase.endedBefore(messages);
    }
    // This run's instruction: the first message of a new conversation, or the next user message of one
    // that continues (a revision round), merged after the plan receipt.
    const first: ConversationMessage = {
      role: 'user',
      content: [{ type: 'text', text: await phase.opening() }],
    };
    await store.appendMessages(conversationId, run.id, [first], clock.now());
    messages.splice(0, messages.length, ...(await store.loadConversation(conversationId)));
    await events.emit(run.id, 'run_started', {
      ...started,
      thinking: settings.request.thinking,
      effort: settings.request.effort,
      // Where the request differs from what was asked (a model that always thinks, a clamped max_tokens).
      notes: settings.request.notes,
      // The project memory file the conversation's system prompt holds (memory.ts), when it holds one.
      ...(frame.memory ? { memory: frame.memory } : {}),
    });
    return null;
  }

  /** The loop's outcome, the ways it can stop by throwing included; anything else is thrown on. */
  private async loopToOutcome(ctx: LoopContext, messages: ConversationMessage[]): Promise<RunOutcome> {
    try {
      return await this.loop(ctx, messages);
    } catch (err) {
      if (err instanceof BudgetExceeded) return { status: 'budget_exceeded', error: err.message };
      if (err instanceof ModelUnavailable) return { status: 'failed', error: err.message };
      if (err instanceof SpendLimitReached) return this.waitOnSpendLimit(ctx, err.message, err.until);
      if (err instanceof SpendCapCrossed) return this.waitOnSpendCap(ctx, err.hit);
      // Aborts are turned into a status by the queue; the phase still settles, but not on a database
      // that cannot be reached (the run is taken over: see RunQueue.carryOut), and not once this process
      // lost the run (another carries it on; its writes are refused anyway).
      if (!(err instanceof StoreUnavailableError) && !lostRun(err, ctx.signal)) {
        await ctx.phase.finish({ status: 'failed', error: (err as Error).message });
      }
      throw err;
    }
  }

  /**
   * Until the run ends or parks: act on the newest message by the stop reason it ended with, else ask the
   * model for the next turn. Every stop reason has its outcome:
   * - end_turn, stop_sequence: the phase decides (the plan phase reminds once, the execute phase completes);
   * - tool_use: the calls run through the phase's gate;
   * - max_tokens: nothing of the reply runs (a call cut off has an incomplete input); the model is told and
   *   asked again, and a run cut off MAX_CUT_OFF_IN_A_ROW times in a row fails;
   * - pause_turn: the conversation is sent again as it is, and the reply continues the same message;
   * - refusal: the run ends `refused` (no plan is proposed; a plan in execution fails);
   * - model_context_window_exceeded, and any stop reason this build does not know: the run fails.
   */
  private async loop(ctx: LoopContext, messages: ConversationMessage[]): Promise<RunOutcome> {
    const { store, clock } = this.deps;
    const row: InARow = { reminded: false, pauses: 0 };
    for (;;) {
      const last = messages[messages.length - 1]!;
      if (last.role === 'assistant') {
        const step = await this.afterReply(ctx, messages, last, row);
        if (step && 'end' in step) return step.end;
        if (step) {
          await store.appendMessages(ctx.conversationId, ctx.run.id, [step.next], clock.now());
          messages.push(step.next);
          continue;
        }
      }
      const end = await this.nextTurn(ctx, messages, last);
      if (end) return end;
    }
  }

  /**
   * What the newest reply's stop reason leads to: the run's end, the next user message (tool results, a
   * reminder, a note that the reply was cut off), or null to ask the model again (pause_turn).
   */
  private async afterReply(
    ctx: LoopContext,
    messages: ConversationMessage[],
    last: ConversationMessage,
    row: InARow,
  ): Promise<Step> {
    const blocks = last.content as { type: string; text?: unknown; thinking?: unknown }[];
    const toolUses = blocks.filter((b): b is ToolUse => b.type === 'tool_use');
    const stop = last.stopReason ?? (toolUses.length > 0 ? 'tool_use' : 'end_turn');
    if (stop !== 'pause_turn') row.pauses = 0;
    switch (stop) {
      case 'pause_turn':
        if (++row.pauses > MAX_PAUSES_IN_A_ROW) {
          return failed(`the model paused its turn ${MAX_PAUSES_IN_A_ROW} times in a row`);
        }
        return null; // asked again, with the paused reply last
      case 'refusal':
        return { end: { status: 'refused', error: refusalReason(ctx.refusal) } };
      case 'model_context_window_exceeded':
        return failed(
          `the conversation filled the context window of ${ctx.settings.model}; the run stopped with its work unfinished`,
        );
      case 'max_tokens':
        return this.cutOff(ctx, messages, toolUses);
      case 'tool_use':
      case 'end_turn':
      case 'stop_sequence': {
        if (toolUses.length === 0) {
          const end = await ctx.phase.endTurn(row.reminded);
          if (!('remind' in end)) return { end };
          row.reminded = true;
          return { next: { role: 'user', content: [{ type: 'text', text: end.remind }] } };
        }
        return this.afterTools(ctx, messages, toolUses, turnProse(blocks));
      }
      default:
        return failed(
          `the model stopped with a stop reason this version of drydock does not know (${stop}); nothing of that reply was run`,
        );
    }
  }

  /**
   * max_tokens: nothing of the reply runs (a call cut off has an incomplete input); the model is told, and a
   * run cut off MAX_CUT_OFF_IN_A_ROW times in a row fails.
   */
  private async cutOff(
    ctx: LoopContext,
    messages: ConversationMessage[],
    toolUses: ToolUse[],
  ): Promise<Step> {
    const cut = inARow(messages, 'max_tokens');
    if (cut >= MAX_CUT_OFF_IN_A_ROW) {
      return failed(
        `the model's replies were cut off at max_tokens (${ctx.settings.maxTokens}) ${cut} times in a row`,
      );
    }
    for (const use of toolUses) {
      await this.deps.events.emit(ctx.run.id, 'tool_call_cut_off', { tool: use.name, tool_use_id: use.id });
    }
    return {
      next: {
        role: 'user',
        content: toolUses.length
          ? toolUses.map((use) => ({
              type: 'tool_result',
              tool_use_id: use.id,
              content: CALL_CUT_OFF,
              is_error: true,
            }))
          : [{ type: 'text', text: REPLY_CUT_OFF }],
      },
    };
  }

  /** The reply's tool calls run; their results are the next message, unless the run parks, planned or failed. */
  private async afterTools(
    ctx: LoopContext,
    messages: ConversationMessage[],
    toolUses: ToolUse[],
    prose: TurnProse,
  ): Promise<Step> {
    const { store, clock } = this.deps;
    const end = await this.runTools(ctx, toolUses, messages, prose);
    if (end === PARKED) return { end: { status: 'awaiting_input' } };
    const next: ConversationMessage = { role: 'user', content: end.results };
    if (!end.planned && !end.repeated) return { next };
    await store.appendMessages(ctx.conversationId, ctx.run.id, [next], clock.now());
    if (end.planned) return { end: { status: 'planned' } };
    // The Messages API refuses any request whose conversation repeats a tool_use id ("`tool_use`
    // ids must be unique", 400): this conversation cannot go on.
    return failed(
      `protocol error: the model's reply reused tool_use id ${JSON.stringify(end.repeated)}; that call was not run`,
    );
  }

  /** Asks the model for the next turn within the turn limit and the budget, and adds its reply. */
  private async nextTurn(
    ctx: LoopContext,
    messages: ConversationMessage[],
    last: ConversationMessage,
  ): Promise<RunOutcome | null> {
    if (ctx.state.turns >= ctx.settings.maxTurns) {
      return { status: 'failed', error: `reached the limit of ${ctx.settings.maxTurns} turns` };
    }
    const spent = ctx.state.costUsd;
    // A turn costs about what the previous one did: do not start one that would pass the budget.
    if (spent + ctx.state.lastTurnUsd > ctx.settings.budgetUsd) {
      throw new BudgetExceeded(
        `spent $${spent.toFixed(4)}; another turn (about $${ctx.state.lastTurnUsd.toFixed(4)}) would pass the budget of $${ctx.settings.budgetUsd}`,
      );
    }
    // A daily_usd cap crossed: the turn that crossed it finished (its reply and tool calls are stored), and no
    // request is sent past it. Checked before each request, so a run queued past the cap waits too.
    const crossed = await this.deps.caps?.crossed({
      sessionId: ctx.run.sessionId,
      triggerId: ctx.run.triggerId,
    });
    if (crossed) throw new SpendCapCrossed(crossed);
    const reply = await this.turn(ctx, messages);
    // A reply continuing a paused turn is stored in the same message (see Store.appendMessages).
    if (last.role === 'assistant' && last.stopReason === 'pause_turn') {
      messages[messages.length - 1] = {
        ...last,
        content: [...last.content, ...reply.content],
        ...(reply.stopReason ? { stopReason: reply.stopReason } : {}),
      };
    } else {
      messages.push(reply);
    }
    if (ctx.state.costUsd > ctx.settings.budgetUsd) {
      throw new BudgetExceeded(
        `spent $${ctx.state.costUsd.toFixed(4)}, over the budget of $${ctx.settings.budgetUsd}`,
      );
    }
    return null;
  }

  /**
   * One turn: a request to the model, streamed into the event log; stores the reply and the run's usage.
   * A transient failure (the SDK's own retries spent, or an error in mid-stream) asks again from the stored
   * conversation, with backoff, up to anthropic.turn_attempts attempts and anthropic.turn_retry_max_ms of
   * waiting; each retry is in the run's events. Other failures end the run with what to fix.
   */
  private async turn(ctx: LoopContext, messages: ConversationMessage[]): Promise<ConversationMessage> {
    const { config, events } = this.deps;
    const {
      turn_attempts: attempts,
      turn_retry_base_ms: baseMs,
      turn_retry_max_ms: maxWaitMs,
    } = config.anthropic;
    const params = buildRequest({
      settings: ctx.settings,
      tools: ctx.frame.tools,
      system: ctx.frame.system,
      messages,
      cache: cacheTtls(ctx.model, ctx.phase.waits),
    });
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      let message: Anthropic.Message;
      // The account is at its spend limit (another run met it): no request until it is resumed.
      const limited = await this.deps.store.waitingUntil('spend_limit', this.deps.clock.now());
      if (limited !== null) throw new SpendLimitReached(SPEND_LIMIT_HELD, limited);
      try {
        message = await this.reply(ctx, params);
      } catch (err) {
        // Only the request is tried again: a failure to store what came back is not the model's.
        if (err instanceof NotTheModel) throw err.cause;
        if (ctx.signal.aborted) throw err;
        const failure = classifyModelError(err, ctx.settings.model);
        this.deps.onModelError?.(failure.kind);
        if (failure.kind === 'spend_limit') throw new SpendLimitReached(failure.reason);
        if (!failure.retry) throw new ModelUnavailable(failure.reason);
        const delay = retryDelay(attempt, baseMs, failure.retryAfterMs);
        if (attempt >= attempts || waited + delay > maxWaitMs) {
          throw new ModelUnavailable(
            `${failure.reason}; gave up after ${attempt} attempt${attempt === 1 ? '' : 's'} over ${Math.round(waited / 1000)} s of retrying`,
          );
        }
        await events.emit(ctx.run.id, 'model_retry', {
          attempt,
          next_attempt_in_ms: delay,
          cause: failure.reason,
          // Text streamed into the log by the failed attempt is not part of the conversation.
          partial_reply_discarded: true,
        });
        await sleep(delay, ctx.signal);
        waited += delay;
        continue;
      }
      return this.record(ctx, message);
    }
  }

  /**
   * The run waits on the account's spend limit, from its stored conversation (the request that met the limit
   * was not answered, so nothing of it is stored): until an admin resumes it or spend_limit_wait_ms passes.
   */
  private async waitOnSpendLimit(ctx: LoopContext, reason: string, heldUntil?: number): Promise<RunOutcome> {
    const until = heldUntil ?? this.deps.clock.now() + this.deps.config.anthropic.spend_limit_wait_ms;
    await this.deps.events.emit(ctx.run.id, 'spend_limit_reached', {
      reason,
      resumes_at: new Date(until).toISOString(),
    });
    return { status: 'awaiting_input', waitingOn: { on: 'spend_limit', until } };
  }

  /**
   * The run waits on a spend cap, from its stored conversation, until the day of the limits zone resets (it is
   * claimed again then) or an admin resumes it (it parks again before its next request unless the cap was
   * raised or removed meanwhile).
   */
  private async waitOnSpendCap(ctx: LoopContext, hit: SpendCapHit): Promise<RunOutcome> {
    await this.deps.events.emit(ctx.run.id, 'spend_cap_reached', {
      reason: spendCapMessage(hit),
      ...spendCapDetails(hit),
    });
    return { status: 'awaiting_input', waitingOn: { on: 'spend_cap', until: hit.resetsAt } };
  }

  /** The model's reply, streamed into the event log as it comes. */
  private async reply(ctx: LoopContext, params: ReturnType<typeof buildRequest>): Promise<Anthropic.Message> {
    const { events, model } = this.deps;
    const emit = (type: 'text_delta' | 'thinking_delta', text: string) =>
      events.emit(ctx.run.id, type, { text }).catch((err: unknown) => {
        throw new NotTheModel(err);
      });
    const stream = model.messages.stream(params, { signal: ctx.signal });
    for await (const ev of stream) {
      if (ev.type !== 'content_block_delta') continue;
      if (ev.delta.type === 'text_delta') await emit('text_delta', ev.delta.text);
      // A thinking delta carries its text in `thinking`, not `text`.
      else if (ev.delta.type === 'thinking_delta') await emit('thinking_delta', ev.delta.thinking);
    }
    return stream.finalMessage();
  }

  /** Stores a reply and the run's usage. */
  private async record(ctx: LoopContext, message: Anthropic.Message): Promise<ConversationMessage> {
    const { store, events, clock } = this.deps;
    const tokens = tokensOf(message.usage);
    const turnUsd = costOf(tokens, ctx.model, promptTokensOf(tokens));
    const s = ctx.state;
    s.turns += 1;
    s.usage = addUsage(s.usage, tokens);
    s.costUsd = Math.round((s.costUsd + turnUsd) * 1e6) / 1e6;
    s.lastTurnUsd = turnUsd;
    // A reply without a stop reason is not one drydock acts on (the loop fails the run on it).
    const stopReason = message.stop_reason ?? 'none';
    const details = message.stop_details as { category?: string | null; explanation?: string | null } | null;
    ctx.refusal =
      stopReason === 'refusal'
        ? { category: details?.category ?? null, explanation: details?.explanation ?? null }
        : null;
    // Thinking blocks (with their signatures) go back to the API exactly as they came; a reply cut off at
    // max_tokens loses what cannot be sent back (a thinking block whose signature never came, empty text).
    const content = stopReason === 'max_tokens' ? sendable(message.content) : (message.content as unknown[]);
    const reply: ConversationMessage = { role: 'assistant', content, stopReason };
    await store.appendMessages(ctx.conversationId, ctx.run.id, [reply], clock.now());
    await store.updateRun(ctx.run.id, { turns: s.turns, usage: s.usage, costUsd: s.costUsd });
    await events.emit(ctx.run.id, 'turn_finished', {
      turn: s.turns,
      stop_reason: stopReason,
      ...(ctx.refusal ? { refusal: ctx.refusal } : {}),
      usage: tokens,
      cost_usd: turnUsd,
    });
    return reply;
  }

  /**
   * Runs one assistant turn's tool calls, in order, through the phase; stops at the first that parks. A
   * tool_use id seen before in the conversation (or twice in the turn) is a protocol error: that call is
   * refused, so nothing stored for the earlier call (an approval, a journaled result) is ever applied to it.
   */
  private async runTools(
    ctx: LoopContext,
    toolUses: ToolUse[],
    messages: ConversationMessage[],
    prose: TurnProse,
  ): Promise<{ results: ToolResultBlock[]; planned: boolean; repeated: string | null } | typeof PARKED> {
    const seen = new Set<string>();
    for (const m of messages.slice(0, -1)) {
      if (m.role !== 'assistant') continue;
      for (const b of m.content as { type: string; id?: unknown }[]) {
        if (b.type === 'tool_use' && typeof b.id === 'string') seen.add(b.id);
      }
    }
    // Resuming after a parked call: the results gathered before it were saved with it; start there.
    let start = 0;
    let results: ToolResultBlock[] = [];
    for (let i = toolUses.length - 1; i >= 0; i--) {
      const use = toolUses[i]!;
      const saved =
        use.name === 'AskUserQuestion'
          ? ((await this.deps.store.findQuestion(ctx.run.id, use.id))?.priorResults as
              | ToolResultBlock[]
              | undefined)
          : await ctx.phase.parkedResults(use);
      if (saved) {
        start = i;
        results = [...saved];
        break;
      }
    }
    for (const use of toolUses.slice(0, start)) seen.add(use.id);
    let planned = false;
    let repeated: string | null = null;
    for (const use of toolUses.slice(start)) {
      const reply = (r: ToolResult) =>
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: r.content,
          ...(r.isError ? { is_error: true } : {}),
        });
      if (seen.has(use.id)) {
        reply(await refuseRepeatedId(this.deps.events, ctx.run, use));
        repeated ??= use.id;
        continue;
      }
      seen.add(use.id);
      if (planned) {
        reply({ content: NOT_RUN_AFTER_PLAN, isError: true });
        continue;
      }
      const r =
        use.name === 'AskUserQuestion'
          ? await this.question(ctx, use, results)
          : await ctx.phase.call(use, results, prose);
      if (r === PARKED) return PARKED;
      if ('planned' in r) {
        reply(r.planned);
        planned = true;
      } else {
        reply(r);
      }
    }
    return { results, planned, repeated };
  }

  /** AskUserQuestion, in either phase: the first time, park the run on a stored question. */
  private async question(
    ctx: LoopContext,
    use: ToolUse,
    prior: ToolResultBlock[],
  ): Promise<ToolResult | typeof PARKED> {
    const { store, events, clock, config } = this.deps;
    const existing = await store.findQuestion(ctx.run.id, use.id);
    if (existing) return questionResult(existing);
    const valid = validateQuestions(use.input);
    if (!valid.ok) return { content: valid.error, isError: true };
    const q = await store.createQuestion({
      id: newId('qst'),
      ...parkedCall(ctx.run, use, prior, clock.now(), config.runs.question_timeout_ms),
      questions: valid.value,
    });
    await events.emit(ctx.run.id, 'question_request', {
      question_id: q.id,
      tool_use_id: use.id,
      questions: valid.value.questions,
      expires_at: new Date(q.expiresAt).toISOString(),
    });
    return PARKED;
  }
}

/** This process no longer holds the run: a write was fenced, or the queue stopped it for a lost claim. */
function lostRun(err: unknown, signal: AbortSignal): boolean {
  const reason: unknown = signal.aborted ? signal.reason : null;
  return err instanceof FencedError || (reason instanceof RunAborted && reason.kind === 'lease');
}

function questionResult(q: Question): ToolResult | typeof PARKED {
  if (q.status === 'pending') return PARKED;
  if (q.status === 'answered' && q.answers) return { content: questionAnswered(q.answers), isError: false };
  return { content: QUESTION_TIMED_OUT, isError: false };
}

/** How many of the newest assistant messages in a row ended with this stop reason. */
function inARow(messages: ConversationMessage[], stop: string): number {
  let n = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    if (m.stopReason !== stop) break;
    n += 1;
  }
  return n;
}

/** The blocks of a cut-off reply that can be sent back; a placeholder when none can. */
function sendable(content: unknown[]): unknown[] {
  const kept = content.filter((b) => {
    const block = b as { type?: string; signature?: unknown; text?: unknown };
    if (block.type === 'thinking') return typeof block.signature === 'string' && block.signature !== '';
    if (block.type === 'text') return typeof block.text === 'string' && block.text !== '';
    return true;
  });
  return kept.length ? kept : [{ type: 'text', text: '(reply cut off at max_tokens)' }];
}

function refusalReason(r: { category: string | null; explanation: string | null } | null): string {
  const why = [r?.category, r?.explanation].filter(Boolean).join(': ');
  return `the model declined to continue (stop reason refusal${why ? `, ${why}` : ''}); nothing more was done`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
