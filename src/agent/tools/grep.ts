import { toolDefinition } from './define.js';
import { guard } from './fs-errors.js';
import { grepInput } from './grep-input.js';
import { searchWorkspace } from './grep-search.js';
import { parseInput } from './input.js';
import type { ToolLimits } from './limits.js';
import { daemonRipgrep } from './ripgrep.js';
import { errorResult, type ToolResult } from './types.js';
import type { Workspace } from './workspace.js';

// Grep is ripgrep, as Claude Code's Grep is ("A powerful search tool built on ripgrep"; its input schema:
// pattern, path, glob, type, output_mode content | files_with_matches (the default) | count, -i, -n (default
// true, content mode), -A/-B/-C and context, multiline (rg -U --multiline-dotall), head_limit (default 250;
// 0 for no limit), offset). Sources: Claude Code's Grep tool description and input schema as published
// (tweakcc's system-prompts/tool-description-grep.md, ccVersion 2.0.14), "Search Tools: Glob & Grep"
// (markdown.engineering/learn-claude-code/19-search-tools: ripgrep underneath, default head_limit 250) and
// the Search tools reference of the public copies of its source (mintlify.wiki/sanbuphy/claude-code-source-code:
// VCS directories .git, .svn, .hg, .bzr, .jj, .sl excluded). Patterns are ripgrep's (Rust) regex syntax:
// inline flags such as (?i) and (?s), Unicode classes \p{Lu}, \b; no look-around or backreferences.

export const grepTool = toolDefinition({
  name: 'Grep',
  description: [
    'Searches file contents in the workspace with ripgrep. The pattern is a ripgrep regular expression (e.g. "function\\s+\\w+", "(?i)todo", "\\p{Lu}\\w+"); literal braces need escaping ("interface\\{\\}").',
    'Filter files with `glob` (e.g. "*.ts", "**/*.{ts,tsx}") or `type` (ripgrep file types, e.g. "js", "py", "rust").',
    'output_mode "files_with_matches" (default) lists matching files, most recently modified first;',
    '"content" shows matching lines (with -n line numbers and -A/-B/-C context, or only the matched parts with -o);',
    '"count" shows matching lines per file. Output is limited to 250 lines or files unless head_limit says otherwise; page with offset.',
    'Binary files, files over 1 MiB, version-control directories and node_modules are skipped; dotfiles are searched. Use Glob to find files by name.',
  ],
  properties: {
    pattern: { type: 'string', description: 'The regular expression to search for (ripgrep syntax).' },
    path: {
      type: 'string',
      description: 'File or directory to search, relative to the workspace. Defaults to the workspace root.',
    },
    glob: {
      type: 'string',
      description:
        'Only search files matching this glob, e.g. "*.js" or "src/**/*.{ts,tsx}". Without a "/" it matches file names at any depth.',
    },
    type: {
      type: 'string',
      description:
        'Only search files of this ripgrep type (rg --type-list), e.g. "js", "py", "rust", "go", "ts".',
    },
    output_mode: {
      type: 'string',
      enum: ['content', 'files_with_matches', 'count'],
      description: 'What to return; defaults to "files_with_matches".',
    },
    '-i': { type: 'boolean', description: 'Case-insensitive search.' },
    '-n': { type: 'boolean', description: 'Show line numbers (content mode only); defaults to true.' },
    '-A': { type: 'number', description: 'Lines of context after each match (content mode only).' },
    '-B': { type: 'number', description: 'Lines of context before each match (content mode only).' },
    '-C': {
      type: 'number',
      description: 'Lines of context before and after each match (content mode only).',
    },
    context: { type: 'number', description: 'The same as -C.' },
    '-o': {
      type: 'boolean',
      description:
        'Show only the matched parts of lines, each on its own line, without context (content mode only).',
    },
    head_limit: {
      type: 'number',
      description:
        'Return only the first N lines or entries of the output, like `| head -N`. Defaults to 250; 0 means no limit.',
    },
    offset: {
      type: 'number',
      description:
        'Skip the first N lines or entries of the output before applying head_limit, like `| tail -n +N+1 | head -M`. Defaults to 0.',
    },
    multiline: {
      type: 'boolean',
      description:
        'Let the pattern span lines (rg -U --multiline-dotall): `.` matches newlines too. Defaults to false.',
    },
  },
  required: ['pattern'],
});

/**
 * Grep's entry point: the input is checked against `grepInput` first, and whatever the search did not
 * foresee becomes an error result. `rg` is the ripgrep program (default: `rg` on the daemon's PATH; null
 * when there is none, and Grep says so). `signal` is the run's: ripgrep is killed when the run is aborted.
 */
export function runGrep(
  ws: Workspace,
  input: unknown,
  limits: ToolLimits,
  rg: string | null = daemonRipgrep(),
  signal?: AbortSignal,
): Promise<ToolResult> {
  return guard('Grep', async () => {
    const parsed = parseInput('Grep', grepInput, input);
    if (!parsed.ok) return errorResult(parsed.error);
    return searchWorkspace(ws, parsed.value, limits, rg, signal);
  });
}

export { type GrepInput, grepInput } from './grep-input.js';
