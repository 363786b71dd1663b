import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { askUserQuestionTool, exitPlanModeTool } from './plan-tools.js';
import { readTool } from './read.js';
import type { ToolDefinition } from './types.js';

/** The tools both phases send first, in this order: reading the workspace and asking the person. */
export const SHARED_TOOLS: readonly ToolDefinition[] = [readTool, globTool, grepTool, askUserQuestionTool];

/** The tools sent in a plan-phase request, in this order (the order is part of the cached prompt prefix). */
export const PLAN_TOOLS: ToolDefinition[] = [...SHARED_TOOLS, exitPlanModeTool];

export {
  type AskedQuestion,
  type AskUserQuestionInput,
  askUserQuestionInput,
  checkAnswers,
  shortHeader,
} from '../../domain/questions.js';
export { globInput, globTool, runGlob } from './glob.js';
export { grepInput, grepTool, runGrep } from './grep.js';
export { DEFAULT_TOOL_LIMITS, type ToolLimits, toolLimits } from './limits.js';
export {
  askUserQuestionTool,
  type ExitPlanModeInput,
  exitPlanModeInput,
  exitPlanModeTool,
  PLAN_MISSING,
  validatePlan,
  validateQuestions,
} from './plan-tools.js';
export { readInput, readTool, runRead } from './read.js';
export type { ToolDefinition, ToolResult } from './types.js';
export { PathError, Workspace } from './workspace.js';
