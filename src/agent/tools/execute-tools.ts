import { bashTool } from './bash.js';
import { editTool } from './edit.js';
import { SHARED_TOOLS } from './index.js';
import type { ToolDefinition } from './types.js';
import { writeTool } from './write.js';

// The execute phase: after a person approved the plan, the agent implements it with the read-only plan tools
// (minus ExitPlanMode: there is no plan left to hand in) plus the tools that change the workspace.

/**
 * The tools sent in an execute-phase request, in this order (the order is part of the cached prompt prefix).
 * Whether a given Write, Edit or Bash call runs without a tool approval is the executor's decision (execute
 * modes `manual`, `edits`, `auto`; see `autoAllowed` in allow-list.ts for Bash).
 */
export const EXECUTE_TOOLS: ToolDefinition[] = [...SHARED_TOOLS, writeTool, editTool, bashTool];

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
// The limits live in limits.ts with the plan tools' ones, so that Write and Edit need not import this list.
export { DEFAULT_EXEC_LIMITS, type ExecLimits, execLimits } from './limits.js';
export { type ChangeResult, runWrite, type WriteInput, writeInput, writeTool } from './write.js';
