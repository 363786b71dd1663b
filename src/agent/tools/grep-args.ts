// The ripgrep command line of one Grep call. Every value the model gave travels in the same argv element
// as its flag (`--regexp=…`, `--glob=…`, `--type=…`), and the path comes after `--` with a `./` in front,
// so nothing the model writes can become an option of its own (`--pre=sh` as a pattern stays a pattern).

/**
 * Directories no search enters: version-control internals (the ones Claude Code's Grep leaves out: .git,
 * .svn, .hg, .bzr, .jj, .sl) and installed dependencies (Glob leaves them out too). A path that names one
 * explicitly is still searched, as ripgrep does.
 */
export const EXCLUDED_DIRS = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl', 'node_modules'] as const;

/** The fixed part: flags that keep ripgrep to the tree it is given and to what it is told. */
const FIXED = [
  // Machine-readable results: paths and lines arrive as JSON strings, whatever characters they hold.
  '--json',
  // No configuration file (RIPGREP_CONFIG_PATH; the environment is empty too).
  '--no-config',
  // No ignore files: .gitignore, .ignore and .rgignore in an untrusted tree (or above it, or the global
  // one) would decide what the search sees. Grep sees what Glob and Read see; EXCLUDED_DIRS leave out the
  // noise ignore files usually would. Claude Code's Grep differs here: it passes --hidden and VCS
  // exclusions but not --no-ignore, so gitignored files are not searched (netease-lcap/wave-agent#1431,
  // mirroring its GrepTool.ts; anthropics/claude-code#84161 and #8600 on what that hides from an audit and
  // that .rgignore hides files from Grep alone). Its Glob passes --no-ignore.
  '--no-ignore',
  // Dotfiles are searched, as Claude Code's Grep does (--hidden); drydock's hidden paths are left out below.
  '--hidden',
  // Symbolic links are never followed (ripgrep's default, stated), so no search leaves the tree; nor are
  // other file systems mounted inside it entered.
  '--no-follow',
  '--one-file-system',
  // Only the built-in regex engine (linear time: no catastrophic backtracking), no preprocessor command,
  // no decompression programs.
  '--no-pcre2',
  '--no-pre',
  '--no-search-zip',
  // Lines end at \n; a \r before it is no part of the line, as in the Read tool.
  '--crlf',
  '--color=never',
  // One thread, results in path order: the same answer every time.
  '--sort=path',
];

export interface RgArgsInput {
  pattern: string;
  /** The workspace-relative path searched ('.' for the root). */
  target: string;
  glob?: string;
  type?: string;
  ignoreCase: boolean;
  multiline: boolean;
  /** Lines of context before and after each match (content mode, not -o). */
  before: number;
  after: number;
  /** files_with_matches: one match is enough for a file. */
  firstMatchOnly: boolean;
  maxFileBytes: number;
  /** drydock's hidden paths below the root, workspace-relative (Workspace.hiddenBelow). */
  hidden: readonly string[];
}

/** A glob that matches `rel` (workspace-relative) literally, anchored at the root. */
export function literalGlob(rel: string): string {
  return `/${rel.replace(/[\\*?[\]{}!]/g, (c) => `\\${c}`)}`;
}

/** The argv after the program. */
export function rgArgs(a: RgArgsInput): string[] {
  const args = [...FIXED, `--max-filesize=${a.maxFileBytes}`];
  if (a.ignoreCase) args.push('--ignore-case');
  if (a.multiline) args.push('--multiline', '--multiline-dotall');
  if (a.before > 0) args.push(`--before-context=${a.before}`);
  if (a.after > 0) args.push(`--after-context=${a.after}`);
  if (a.firstMatchOnly) args.push('--max-count=1');
  if (a.type !== undefined) args.push(`--type=${a.type}`);
  // The model's glob first: of the globs that match a path the last one decides, so the exclusions after
  // it cannot be undone by it.
  if (a.glob !== undefined) args.push(`--glob=${a.glob}`);
  for (const dir of EXCLUDED_DIRS) args.push(`--glob=!${dir}`);
  for (const rel of a.hidden) args.push(`--glob=!${literalGlob(rel)}`);
  args.push(`--regexp=${a.pattern}`, '--', a.target === '.' ? '.' : `./${a.target}`);
  return args;
}
