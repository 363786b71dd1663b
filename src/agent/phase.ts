import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { ConversationFrame } from '../domain/frame.js';
import type { PlanRecorder } from '../domain/plan-status.js';
import type { ConversationMessage } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { RunEvents } from '../runs/events.js';
import type { RunOutcome } from '../runs/queue.js';
import type { Store } from '../store/store.js';
import type { HiddenPaths } from '../workspace/hidden.js';
import type { RepoCache } from '../workspace/repo-cache.js';
import type { Waits } from './cache-ttl.js';
import type { Egress } from './egress.js';
import type { RunMcp } from './mcp-run.js';
import type { Sandbox } from './sandbox.js';
import type { ToolLimits } from './tools/limits.js';
import type { TurnProse } from './tools/turn-prose.js';
import type { ToolResult } from './tools/types.js';
import type { Workspace } from './tools/workspace.js';

/** What the phases work with: the agent loop's dependencies but the model client. */
export interface PhaseDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  events: RunEvents;
  toolLimits: ToolLimits;
  /** Where the execute phase's commands run (see sandbox.ts). */
  sandbox: Sandbox;
  /** What no tool may see: the sandbox was built with these paths, and every Workspace is opened with them. */
  hidden: HiddenPaths;
  /** The egress proxy: where commands of a plan that allows host names reach them (see egress.ts). */
  egress: Pick<Egress, 'open'>;
  /** Writes the plans the phases propose and carry out (the plan service, src/plans/lifecycle.ts). */
  lifecycle: PlanRecorder;
  /** The run's MCP servers, started when its conversation needs them (mcp-run.ts). */
  mcp: RunMcp;
  /**
   * The clones of repositories no configuration maps to a local clone (workspace/repo-cache.ts): a pull
   * request run on one fetches what it needs before its checkout or worktree is made. Absent: none.
   */
  repoCache?: Pick<RepoCache, 'holds' | 'prepare'> | undefined;
}

export type ToolUse = { type: 'tool_use'; id: string; name: string; input: unknown };
export type ToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
};

/** A tool call waits for a person (a question, a tool approval). */
export const PARKED = Symbol('parked');

/** What differs between the plan phase and the execute phase; the loop in runner.ts is shared. */
export interface Phase {
  /**
   * The frame (system texts, tool definitions) a new conversation of this phase starts with: computed once,
   * when the conversation starts, and stored; every later request of the conversation is sent with the
   * stored one (frame.ts `conversationFrame`, request.ts). May read files or open servers. Never called for a
   * conversation that has a frame, or messages, already.
   */
  frame(): Promise<ConversationFrame>;
  /** The frame of a conversation stored before frames were: the phase's constant system texts and tools. */
  readonly constantFrame: ConversationFrame;
  /**
   * Told the frame the conversation is sent with (new, stored or constant) before the first turn, when the
   * phase needs to know it (e.g. the tools it lists).
   */
  adopt?(frame: ConversationFrame): Promise<void>;
  readonly workspace: Workspace;
  /** Whether any turn may end waiting for a person: decides the prompt cache's TTL (cache-ttl.ts). */
  readonly waits: Waits;
  /** The text of the run's first message when it starts a conversation or adds to one. */
  opening(): Promise<string>;
  /**
   * One tool call (other than AskUserQuestion, which the loop handles for both phases). `prior` holds the
   * results of the same turn so far, saved with anything that parks; `prose` is what the model wrote in
   * that turn besides its calls. `planned` ends the run after this turn.
   */
  call(
    use: ToolUse,
    prior: ToolResultBlock[],
    prose: TurnProse,
  ): Promise<ToolResult | typeof PARKED | { planned: ToolResult }>;
  /** Whether a parked record (other than a question) exists for this call, for resuming after it. */
  parkedResults(use: ToolUse): Promise<ToolResultBlock[] | null>;
  /**
   * A run taken up again (after a crash, a restart or a takeover) that had already reached its end before
   * it died, as its stored conversation and records show: that end, and nothing runs or is asked again; null
   * to carry on.
   */
  endedBefore(messages: readonly ConversationMessage[]): Promise<RunOutcome | null>;
  /** The model ended its turn without calling a tool. */
  endTurn(reminded: boolean): Promise<RunOutcome | { remind: string }>;
  /** Last word on the outcome (the execute phase commits and settles its plan here). */
  finish(outcome: RunOutcome): Promise<RunOutcome>;
}
