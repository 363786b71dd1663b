import type Anthropic from '@anthropic-ai/sdk';
import type { Clock } from '../clock.js';
import type { Config, ModelPrice } from '../config/schema.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { RunEvents } from '../runs/events.js';
import type { RunExecutor, RunOutcome } from '../runs/queue.js';
import type { Store } from '../store/store.js';
import type { ConversationMessage, Question, Run, RunSettings, TokenUsage } from '../store/types.js';
import { checkoutPullRequest } from '../triggers/checkout.js';
import { ExecutePhase } from './execute-phase.js';
import { PARKED, type Phase, type ToolResultBlock, type ToolUse } from './phase.js';
import { PlanPhase } from './plan-phase.js';
import { addUsage, costOf, tokensOf } from './pricing.js';
import {
  BASE_SYSTEM_PROMPT,
  NOT_RUN_AFTER_PLAN,
  QUESTION_TIMED_OUT,
  questionAnswered,
  repeatedToolUseId,
} from './prompt.js';
import { buildRequest } from './request.js';
import type { Sandbox } from './sandbox.js';
import { checkoutPath, resolveSettings } from './settings.js';
import type { ToolLimits } from './tools/limits.js';
import { validateQuestions } from './tools/plan-tools.js';
import type { ToolResult } from './tools/types.js';
import { Workspace } from './tools/workspace.js';

export interface AgentDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  events: RunEvents;
  /** The Messages API client (the real SDK; tests point it at a local server). */
  model: Anthropic;
  toolLimits: ToolLimits;
  /** Where the execute phase's commands run (see sandbox.ts). */
  sandbox: Sandbox;
}

class BudgetExceeded extends Error {}

interface LoopContext {
  run: Run;
  phase: Phase;
  settings: RunSettings;
  price: ModelPrice;
  conversationId: string;
  state: { turns: number; usage: TokenUsage; costUsd: number; lastTurnUsd: number };
  signal: AbortSignal;
}

/**
 * drydock's agent loop over `messages.stream`, shared by the plan and the execute phase. Each turn: build
 * the request (the phase's tools only), stream the answer into the event log, store the assistant
 * message, run its tool calls through the phase's gate, store the results. The stored conversation is
 * the state: a run resumed after a restart or an answer picks up from its last stored message.
 */
export class AgentExecutor implements RunExecutor {
  constructor(private readonly deps: AgentDeps) {}

  async execute(run: Run, signal: AbortSignal): Promise<RunOutcome> {
    const { store, config, events, clock } = this.deps;
    const session = await store.getSession(run.sessionId);
    if (!session) return { status: 'failed', error: `session ${run.sessionId} no longer exists` };
    const settings = resolveSettings(run, session, config);
    const price = config.pricing[settings.model];
    if (!price) {
      return {
        status: 'failed',
        error: `no price for model ${settings.model}: add pricing.${settings.model} to the configuration`,
      };
    }
    const conversationId = run.conversationId ?? run.id;
    await store.updateRun(run.id, { conversationId, model: settings.model, settings });

    let phase: Phase;
    if (run.phase === 'execute') {
      const opened = await ExecutePhase.open(this.deps, run, session, signal);
      if (!(opened instanceof ExecutePhase)) return opened;
      phase = opened;
    } else {
      let workspace: Workspace;
      try {
        // A pull request run plans in a worktree at the PR's head, not in the clone's checkout.
        const root = run.checkout
          ? await checkoutPullRequest(run.checkout, checkoutPath(config, run.id))
          : session.workspace;
        workspace = await Workspace.open(root);
      } catch (err) {
        return { status: 'failed', error: `workspace cannot be prepared: ${(err as Error).message}` };
      }
      phase = new PlanPhase(this.deps, run, session, workspace, conversationId);
    }

    const messages = await store.loadConversation(conversationId);
    if (!messages.some((m) => m.runId === run.id)) {
      // This run's instruction: the first message of a new conversation, or the next user message of one
      // that continues (a revision round, the execute phase), merged after the plan receipt.
      const first: ConversationMessage = { role: 'user', content: [{ type: 'text', text: run.prompt }] };
      await store.appendMessages(conversationId, run.id, [first], clock.now());
      messages.splice(0, messages.length, ...(await store.loadConversation(conversationId)));
      await events.emit(run.id, 'run_started', {
        phase: run.phase,
        model: settings.model,
        attempt: run.attempt,
      });
    } else {
      await events.emit(run.id, 'run_resumed', {
        phase: run.phase,
        model: settings.model,
        attempt: run.attempt,
      });
    }

    const state = { turns: run.turns, usage: run.usage as TokenUsage, costUsd: run.costUsd, lastTurnUsd: 0 };
    const ctx: LoopContext = { run, phase, settings, price, conversationId, state, signal };
    let outcome: RunOutcome;
    try {
      outcome = await this.loop(ctx, messages);
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) {
        // Aborts and model failures are turned into a status by the queue; the phase still settles.
        await phase.finish({ status: 'failed', error: (err as Error).message });
        throw err;
      }
      outcome = { status: 'budget_exceeded', error: err.message };
    }
    return phase.finish(outcome);
  }

  private async loop(ctx: LoopContext, messages: ConversationMessage[]): Promise<RunOutcome> {
    const { store, clock } = this.deps;
    let reminded = false;
    for (;;) {
      const last = messages[messages.length - 1]!;
      if (last.role === 'assistant') {
        const toolUses = (last.content as { type: string }[]).filter(
          (b): b is ToolUse => b.type === 'tool_use',
        );
        let next: ConversationMessage;
        if (toolUses.length === 0) {
          const end = await ctx.phase.endTurn(reminded);
          if (!('remind' in end)) return end;
          reminded = true;
          next = { role: 'user', content: [{ type: 'text', text: end.remind }] };
        } else {
          const end = await this.runTools(ctx, toolUses, messages);
          if (end === PARKED) return { status: 'awaiting_input' };
          next = { role: 'user', content: end.results };
          if (end.planned || end.repeated) {
            await store.appendMessages(ctx.conversationId, ctx.run.id, [next], clock.now());
            if (end.planned) return { status: 'planned' };
            // The Messages API refuses any request whose conversation repeats a tool_use id ("`tool_use`
            // ids must be unique", 400): this conversation cannot go on.
            return {
              status: 'failed',
              error: `protocol error: the model's reply reused tool_use id ${JSON.stringify(end.repeated)}; that call was not run`,
            };
          }
        }
        await store.appendMessages(ctx.conversationId, ctx.run.id, [next], clock.now());
        messages.push(next);
        continue;
      }
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
      messages.push(await this.turn(ctx, messages));
      if (ctx.state.costUsd > ctx.settings.budgetUsd) {
        throw new BudgetExceeded(
          `spent $${ctx.state.costUsd.toFixed(4)}, over the budget of $${ctx.settings.budgetUsd}`,
        );
      }
    }
  }

  /** One request to the model, streamed into the event log; stores the reply and the run's usage. */
  private async turn(ctx: LoopContext, messages: ConversationMessage[]): Promise<ConversationMessage> {
    const { store, events, clock, model } = this.deps;
    const params = buildRequest({
      settings: ctx.settings,
      tools: ctx.phase.tools,
      basePrompt: BASE_SYSTEM_PROMPT,
      directive: ctx.phase.directive,
      messages,
    });
    const stream = model.messages.stream(params, { signal: ctx.signal });
    for await (const ev of stream) {
      if (ev.type !== 'content_block_delta') continue;
      if (ev.delta.type === 'text_delta')
        await events.emit(ctx.run.id, 'text_delta', { text: ev.delta.text });
      // A thinking delta carries its text in `thinking`, not `text`.
      else if (ev.delta.type === 'thinking_delta')
        await events.emit(ctx.run.id, 'thinking_delta', { text: ev.delta.thinking });
    }
    const message = await stream.finalMessage();
    const tokens = tokensOf(message.usage);
    const turnUsd = costOf(tokens, ctx.price);
    const s = ctx.state;
    s.turns += 1;
    s.usage = addUsage(s.usage, tokens);
    s.costUsd = Math.round((s.costUsd + turnUsd) * 1e6) / 1e6;
    s.lastTurnUsd = turnUsd;
    // Thinking blocks (with their signatures) go back to the API exactly as they came.
    const reply: ConversationMessage = { role: 'assistant', content: message.content as unknown[] };
    await store.appendMessages(ctx.conversationId, ctx.run.id, [reply], clock.now());
    await store.updateRun(ctx.run.id, { turns: s.turns, usage: s.usage, costUsd: s.costUsd });
    await events.emit(ctx.run.id, 'turn_finished', {
      turn: s.turns,
      stop_reason: message.stop_reason,
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
        await this.deps.events.emit(ctx.run.id, 'policy_violation', {
          tool: use.name,
          tool_use_id: use.id,
          phase: ctx.run.phase,
          reason: 'repeated_tool_use_id',
        });
        reply({ content: repeatedToolUseId(use.id), isError: true });
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
          : await ctx.phase.call(use, results);
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
    const now = clock.now();
    const q = await store.createQuestion({
      id: newId('qst'),
      runId: ctx.run.id,
      sessionId: ctx.run.sessionId,
      toolUseId: use.id,
      questions: valid.value,
      priorResults: prior,
      createdAt: now,
      expiresAt: now + config.runs.question_timeout_ms,
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

function questionResult(q: Question): ToolResult | typeof PARKED {
  if (q.status === 'pending') return PARKED;
  if (q.status === 'answered' && q.answers) return { content: questionAnswered(q.answers), isError: false };
  return { content: QUESTION_TIMED_OUT, isError: false };
}
