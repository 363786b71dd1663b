// What a plan stands on: the files of the workspace its plan phase read, searched and named. Recorded with
// the plan when it is proposed (agent/tools/footprint.ts); the staleness rule (plans/staleness.ts) compares it
// with what changed in the workspace since the plan's commit.

/** A Glob search: a path below `dir` (workspace-relative, `.` the root) that matches `pattern` there counts. */
export interface FootprintGlob {
  dir: string;
  pattern: string;
}

/**
 * The plan's footprint, every path workspace-relative with `/` separators. A change to one of `files`, to
 * anything below one of `dirs` (`.`: the whole workspace), or to a path one of `globs` matches makes the plan
 * stale. A plan without one (made before footprints were recorded, or one whose plan phase read in ways
 * drydock cannot bound, such as an MCP tool) is stale as soon as the workspace moves at all.
 */
export interface PlanFootprint {
  /** Files read with Read, named in the plan's text, and the project memory files. */
  files: string[];
  /** Directories searched with Grep (any change below them counts), or named in the plan's text. */
  dirs: string[];
  globs: FootprintGlob[];
}

/**
 * The commit an approved plan's execution starts from: the head it was approved on when the workspace had
 * moved on without touching the plan's footprint, else the commit the plan was made against.
 */
export function executionBase(plan: {
  workspaceCommit: string | null;
  executionBase?: string | null;
}): string | null {
  return plan.executionBase ?? plan.workspaceCommit;
}
