import { bashTool } from './bash.js';
import { editTool } from './edit.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { askUserQuestionTool } from './plan-tools.js';
import { readTool } from './read.js';
import type { ToolDefinition } from './types.js';
import { writeTool } from './write.js';

// The execute phase: after a person approved the plan, the agent implements it with the read-only plan tools
// (minus ExitPlanMode: there is no plan left to hand in) plus the tools that change the workspace.

/**
 * The tools sent in an execute-phase request, in this order (the order is part of the cached prompt prefix).
 * Whether a given Write, Edit or Bash call runs without a tool approval is the executor's decision (execute
 * modes `manual`, `edits`, `auto`; see `autoAllowed` in allow-list.ts for Bash).
 */
export const EXECUTE_TOOLS: ToolDefinition[] = [
  readTool,
  globTool,
  grepTool,
  askUserQuestionTool,
  writeTool,
  editTool,
  bashTool,
];

/** Bounds on what one Write or Edit call may change. */
export interface ExecLimits {
  /** Write and Edit: most bytes a file may have, before (Edit) and after the change (default 5 MiB). */
  maxWriteBytes: number;
}

export const DEFAULT_EXEC_LIMITS: ExecLimits = Object.freeze({ maxWriteBytes: 5 * 1024 * 1024 });

/** The defaults with some limits replaced, e.g. from configuration. */
export function execLimits(overrides: Partial<ExecLimits> = {}): ExecLimits {
  return { ...DEFAULT_EXEC_LIMITS, ...overrides };
}

export {
  type AutoAllowed,
  type AutoAllowOptions,
  autoAllowed,
  linksOutside,
  parseShellWords,
  type ShellWords,
} from './allow-list.js';
export {
  BACKGROUND_REFUSED,
  BASH_MAX_TIMEOUT_MS,
  type BashInput,
  type BashOptions,
  type BashResult,
  bashInput,
  bashTool,
  DEFAULT_BASH_LIMITS,
  isSecretName,
  OutputBuffer,
  runBash,
  safeEnv,
} from './bash.js';
export { type EditInput, editInput, editTool, runEdit } from './edit.js';
export { type ChangeResult, runWrite, type WriteInput, writeInput, writeTool } from './write.js';
