import { z } from 'zod';
import { MAX_GLOB_PATTERN_CHARS } from './glob-pattern.js';

// Grep's input as the model sends it (Claude Code's Grep schema, see grep.ts).

const MAX_PATTERN_CHARS = 10_000;
const MAX_CONTEXT_LINES = 100;

const contextLines = z.number().int().min(0).max(MAX_CONTEXT_LINES).optional();

export const grepInput = z.object({
  pattern: z.string().min(1).max(MAX_PATTERN_CHARS),
  path: z.string().optional(),
  glob: z.string().min(1).max(MAX_GLOB_PATTERN_CHARS).optional(),
  type: z.string().optional(),
  output_mode: z.enum(['content', 'files_with_matches', 'count']).optional(),
  '-i': z.boolean().optional(),
  '-n': z.boolean().optional(),
  '-A': contextLines,
  '-B': contextLines,
  '-C': contextLines,
  /** Claude Code's long name for -C; -C wins when both are given. */
  context: contextLines,
  '-o': z.boolean().optional(),
  head_limit: z.number().int().min(0).optional(),
  offset: z.number().int().min(0).optional(),
  multiline: z.boolean().optional(),
});
export type GrepInput = z.infer<typeof grepInput>;
