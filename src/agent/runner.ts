import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { Clock } from '../clock.js';
import type { Config, ModelPrice } from '../config/schema.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { RunEvents } from '../runs/events.js';
import type { RunExecutor, RunOutcome } from '../runs/queue.js';
import type { Store } from '../store/store.js';
import type { ConversationMessage, Question, Run, RunSettings, TokenUsage } from '../store/types.js';
import { headCommit } from './git.js';
import { addUsage, costOf, tokensOf } from './pricing.js';
import {
  BASE_SYSTEM_PROMPT,
  NOT_RUN_AFTER_PLAN,
  PLAN_CAPTURED,
  PLAN_MODE_DIRECTIVE,
  PLAN_REMINDER,
  planToolRefused,
  QUESTION_TIMED_OUT,
  questionAnswered,
} from './prompt.js';
import { buildRequest } from './request.js';
import { resolveSettings } from './settings.js';
import { PLAN_TOOLS, runGlob, runGrep, runRead, type ToolLimits, Workspace } from './tools/index.js';
import { validatePlan, validateQuestions } from './tools/plan-tools.js';
import type { ToolResult } from './tools/types.js';

export interface AgentDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  events: RunEvents;
  /** The Messages API client (the real SDK; tests point it at a local server). */
  model: Anthropic;
  toolLimits: ToolLimits;
}

type ToolUse = { type: 'tool_use'; id: string; name: string; input: unknown };
type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

/** What processing one assistant turn's tool calls led to. */
type TurnEnd =
  | { kind: 'continue'; results: ToolResultBlock[] }
  | { kind: 'parked' }
  | { kind: 'planned'; results: ToolResultBlock[] };

const PLAN_TOOL_NAMES = new Set(PLAN_TOOLS.map((t) => t.name));

class BudgetExceeded extends Error {}

/**
 * The plan-phase agent loop over `messages.stream`. Each turn: build the request (only plan tools), stream
 * the answer into the event log, store the assistant message, run the tool calls through the gate, store
 * the results. The conversation in the store is the state: a run resumed after a restart or an answered
 * question picks up from its last stored message.
 */
export class AgentExecutor implements RunExecutor {
  constructor(private readonly deps: AgentDeps) {}

  async execute(run: Run, signal: AbortSignal): Promise<RunOutcome> {
    const { store, config, events } = this.deps;
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

    let workspace: Workspace;
    try {
      workspace = await Workspace.open(session.workspace);
    } catch (err) {
      return {
        status: 'failed',
        error: `workspace ${session.workspace} cannot be opened: ${(err as Error).message}`,
      };
    }

    const messages = await store.loadConversation(conversationId);
    if (messages.length === 0) {
      const first: ConversationMessage = { role: 'user', content: [{ type: 'text', text: run.prompt }] };
      await store.appendMessages(conversationId, run.id, [first], this.deps.clock.now());
      messages.push(first);
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
    const ctx = { run, settings, price, workspace, conversationId, state, signal };
    try {
      return await this.loop(ctx, messages);
    } catch (err) {
      if (err instanceof BudgetExceeded) return { status: 'budget_exceeded', error: err.message };
      throw err;
    }
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
          // The model ended its turn without a plan: remind it once, then give up.
          if (reminded)
            return { status: 'failed', error: 'the model ended its turn without proposing a plan' };
          reminded = true;
          next = { role: 'user', content: [{ type: 'text', text: PLAN_REMINDER }] };
        } else {
          const end = await this.runTools(ctx, toolUses);
          if (end.kind === 'parked') return { status: 'awaiting_input' };
          next = { role: 'user', content: end.results };
          if (end.kind === 'planned') {
            await store.appendMessages(ctx.conversationId, ctx.run.id, [next], clock.now());
            return { status: 'planned' };
          }
        }
        await store.appendMessages(ctx.conversationId, ctx.run.id, [next], clock.now());
        messages.push(next);
        continue;
      }
      if (ctx.state.turns >= ctx.settings.maxTurns) {
        return {
          status: 'failed',
          error: `reached the limit of ${ctx.settings.maxTurns} turns without a plan`,
        };
      }
      const spent = ctx.state.costUsd;
      // A turn costs at least about what the previous one did: do not start one that would pass the budget.
      if (spent + ctx.state.lastTurnUsd > ctx.settings.budgetUsd) {
        throw new BudgetExceeded(
          `spent $${spent.toFixed(4)}; another turn (about $${ctx.state.lastTurnUsd.toFixed(4)}) would pass the budget of $${ctx.settings.budgetUsd}`,
        );
      }
      const reply = await this.turn(ctx, messages);
      messages.push(reply);
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
      tools: PLAN_TOOLS,
      basePrompt: BASE_SYSTEM_PROMPT,
      directive: PLAN_MODE_DIRECTIVE,
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

  /** Runs one assistant turn's tool calls through the plan-mode gate, in order. */
  private async runTools(ctx: LoopContext, toolUses: ToolUse[]): Promise<TurnEnd> {
    const { events } = this.deps;
    const runId = ctx.run.id;
    // Resuming after a question: the results gathered before it were saved with it; start after them.
    let start = 0;
    let results: ToolResultBlock[] = [];
    for (let i = toolUses.length - 1; i >= 0; i--) {
      const q =
        toolUses[i]!.name === 'AskUserQuestion'
          ? await this.deps.store.findQuestion(runId, toolUses[i]!.id)
          : null;
      if (q) {
        start = i;
        results = q.priorResults as ToolResultBlock[];
        break;
      }
    }
    let planned = false;
    for (const use of toolUses.slice(start)) {
      const reply = (r: ToolResult) =>
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: r.content,
          ...(r.isError ? { is_error: true } : {}),
        });
      if (planned) {
        reply({ content: NOT_RUN_AFTER_PLAN, isError: true });
        continue;
      }
      if (!PLAN_TOOL_NAMES.has(use.name)) {
        // The gate: whatever the model asks for, only plan tools run in plan mode.
        await events.emit(runId, 'policy_violation', { tool: use.name, tool_use_id: use.id, phase: 'plan' });
        reply({ content: planToolRefused(use.name), isError: true });
        continue;
      }
      if (use.name === 'AskUserQuestion') {
        const answer = await this.question(ctx, use, results);
        if (answer === null) return { kind: 'parked' };
        reply(answer);
        continue;
      }
      if (use.name === 'ExitPlanMode') {
        const r = await this.capturePlan(ctx, use);
        reply(r);
        planned = !r.isError;
        continue;
      }
      await events.emit(runId, 'tool_use', { tool: use.name, tool_use_id: use.id, input: use.input });
      const r = await this.readOnlyTool(ctx.workspace, use);
      await events.emit(runId, 'tool_result', {
        tool: use.name,
        tool_use_id: use.id,
        is_error: r.isError,
        truncated: r.truncated ?? false,
        chars: r.content.length,
      });
      reply(r);
    }
    return planned ? { kind: 'planned', results } : { kind: 'continue', results };
  }

  private readOnlyTool(ws: Workspace, use: ToolUse): Promise<ToolResult> {
    const limits = this.deps.toolLimits;
    switch (use.name) {
      case 'Read':
        return runRead(ws, use.input, limits);
      case 'Glob':
        return runGlob(ws, use.input, limits);
      default:
        return runGrep(ws, use.input, limits);
    }
  }

  /**
   * AskUserQuestion: the first time, park the run on a stored question; once it is answered or timed out,
   * return what the model reads. Null means: parked, waiting.
   */
  private async question(
    ctx: LoopContext,
    use: ToolUse,
    prior: ToolResultBlock[],
  ): Promise<ToolResult | null> {
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
    return null;
  }

  private async capturePlan(ctx: LoopContext, use: ToolUse): Promise<ToolResult> {
    const { store, events, clock } = this.deps;
    let plan = await store.findPlan(ctx.run.id, use.id);
    if (!plan) {
      const parsed = validatePlan(use.input);
      if (!parsed.ok) return { content: parsed.error, isError: true };
      const markdown = parsed.value.plan;
      plan = await store.createPlan({
        id: newId('pln'),
        runId: ctx.run.id,
        sessionId: ctx.run.sessionId,
        conversationId: ctx.conversationId,
        toolUseId: use.id,
        markdown,
        sha256: createHash('sha256').update(markdown).digest('hex'),
        workspaceCommit: await headCommit(ctx.workspace.root),
        status: 'pending_approval',
        round: 1,
        previousPlanId: null,
        requestedBy: ctx.run.requestedBy,
        createdAt: clock.now(),
      });
      await store.updateRun(ctx.run.id, { planId: plan.id });
    }
    await events.emit(ctx.run.id, 'plan_proposed', {
      plan_id: plan.id,
      sha256: plan.sha256,
      workspace_commit: plan.workspaceCommit,
      markdown: plan.markdown,
    });
    return {
      content: `${PLAN_CAPTURED} (plan ${plan.id}, sha256 ${plan.sha256.slice(0, 12)})`,
      isError: false,
    };
  }
}

interface LoopContext {
  run: Run;
  settings: RunSettings;
  price: ModelPrice;
  workspace: Workspace;
  conversationId: string;
  state: { turns: number; usage: TokenUsage; costUsd: number; lastTurnUsd: number };
  signal: AbortSignal;
}

function questionResult(q: Question): ToolResult | null {
  if (q.status === 'pending') return null;
  if (q.status === 'answered' && q.answers) return { content: questionAnswered(q.answers), isError: false };
  return { content: QUESTION_TIMED_OUT, isError: false };
}
