/**
 * Bounds on what one plan-phase tool call may read, scan and return. Every tool result must stay small enough
 * to go back to the model, and no call may load an unbounded amount of a workspace into memory.
 */
export interface ToolLimits {
  /**
   * Read: most bytes consumed from the starting line onwards (default 256 KiB). A file bigger than this is
   * read only up to it; the result says where it stopped and how to continue with `offset`.
   */
  maxReadBytes: number;
  /** Every tool: most characters in one result, notes included (default 30 000). */
  maxResultChars: number;
  /** Read and Grep: longer lines are cut and marked (default 2000). */
  maxLineChars: number;
  /** Read: lines returned when the call gives no `limit` (default 2000). */
  defaultReadLines: number;
  /** Glob: most paths listed (default 500). */
  maxGlobResults: number;
  /** Grep: most matching lines (content mode) or files collected (default 500). */
  maxGrepMatches: number;
  /** Grep: bigger files are skipped and counted in a note (default 1 MiB). */
  maxFileBytesForGrep: number;
  /** Glob: the walk stops after this many files (default 20 000); Grep (ripgrep) has its time bound instead. */
  maxFilesScanned: number;
}

export const DEFAULT_TOOL_LIMITS: ToolLimits = Object.freeze({
  maxReadBytes: 256 * 1024,
  maxResultChars: 30_000,
  maxLineChars: 2000,
  defaultReadLines: 2000,
  maxGlobResults: 500,
  maxGrepMatches: 500,
  maxFileBytesForGrep: 1024 * 1024,
  maxFilesScanned: 20_000,
});

/** The defaults with some limits replaced, e.g. from configuration. */
export function toolLimits(overrides: Partial<ToolLimits> = {}): ToolLimits {
  return { ...DEFAULT_TOOL_LIMITS, ...overrides };
}

/** Bounds on what one Write or Edit call may change. */
export interface ExecLimits {
  /** Write and Edit: most bytes a file may have, before (Edit) and after the change (default 5 MiB). */
  maxWriteBytes: number;
}

export const DEFAULT_EXEC_LIMITS: ExecLimits = Object.freeze({ maxWriteBytes: 5 * 1024 * 1024 });

/** The execute-phase defaults with some limits replaced, e.g. from configuration. */
export function execLimits(overrides: Partial<ExecLimits> = {}): ExecLimits {
  return { ...DEFAULT_EXEC_LIMITS, ...overrides };
}
