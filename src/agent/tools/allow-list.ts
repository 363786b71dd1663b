import { realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

// The `auto`-mode allow-list: which Bash commands run without a person's approval. A command string is first
// parsed into argv by a deliberately small subset of shell syntax (anything this parser does not fully
// understand is refused, never guessed), then argv must start with an allow-list entry, and then every argument
// is checked against rules that hold whatever the command.
//
// Why argv and not the string: a prefix check on the string let arguments do the damage. `git diff --no-index
// --text /etc/passwd /dev/null` read any file, `git log --output=/x` wrote any file, `ls /proc/$PPID` expanded
// variables, and `npm test` ran whatever `test` script the model had just written into package.json.
//
// What argv checks cannot see: files that the command reads on its own (configuration in HOME, closed by the
// executor: HOME is never the workspace) and symbolic links committed in the repository, which a command
// would follow out of the worktree: `linksOutside` resolves each argument that names an existing path and
// refuses one whose real path leaves the workspace. The sandbox is the last word on both.
//
// A refusal is not a denial: the command waits for a person's approval. So the rules lean to refusing (false
// positives cost one approval), and each refusal comes with a short reason for the approver and the model.

export type ShellWords = { ok: true; argv: string[] } | { ok: false; reason: string };

export type AutoAllowed = { allowed: true; argv: string[] } | { allowed: false; reason: string };

export interface AutoAllowOptions {
  /** True when commands run inside an OS-level sandbox; only then may repository-defined code run unasked. */
  sandboxed: boolean;
}

// --- parsing ------------------------------------------------------------------------------------------------

/**
 * Characters that are special to bash wherever they appear outside quotes, with what they would do. A backslash
 * before one of them is refused too: escapes are accepted for ordinary characters only.
 */
const SPECIAL: ReadonlyMap<string, string> = new Map([
  ['$', '`$` outside single quotes (a shell expansion or substitution)'],
  ['`', 'a backtick (command substitution)'],
  [';', '`;` (more than one command)'],
  ['&', '`&` (a background job or more than one command)'],
  ['|', '`|` (a pipe or more than one command)'],
  ['<', '`<` (a redirection)'],
  ['>', '`>` (a redirection)'],
  ['(', '`(` (a subshell or substitution)'],
  [')', '`)` (a subshell or substitution)'],
  ['*', 'an unquoted `*` (a file-name pattern)'],
  ['?', 'an unquoted `?` (a file-name pattern)'],
  ['[', 'an unquoted `[` (a file-name pattern)'],
  ['{', 'an unquoted `{` (brace expansion)'],
  ['}', 'an unquoted `}` (brace expansion)'],
  ['!', '`!` outside single quotes (history expansion or negation)'],
]);

/** Characters still special inside double quotes. */
const INSIDE_DOUBLE_QUOTES: ReadonlyMap<string, string> = new Map([
  ['$', '`$` inside double quotes (a shell expansion or substitution)'],
  ['`', 'a backtick inside double quotes (command substitution)'],
  ['!', '`!` inside double quotes (history expansion)'],
]);

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `NAME=` or `NAME+=` at the start of the first word: bash would take it as an assignment, not a command. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

/**
 * `command` as bash would split it into argv, for a small subset of its syntax; anything else is refused with
 * a reason. Accepted: plain words separated by spaces; single-quoted strings (taken literally, `$` included);
 * double-quoted strings without `$`, backtick or `!`, whose only escapes are `\"` and `\\`; a backslash before an
 * ordinary character outside quotes. Refused: `$` and backticks outside single quotes, `; & | < > ( )`, control
 * characters (newline, tab, ...), unquoted `* ? [ { }`, `~` at the start of a word or after `=` or `:` (tilde
 * expansion), `#` at the start of a word (a comment), `!` outside single quotes, an unterminated quote, and a
 * first word that assigns a variable (`FOO=1 ls` changes the command's environment).
 */
export function parseShellWords(command: string): ShellWords {
  const refuse = (reason: string): ShellWords => ({ ok: false, reason });
  if (CONTROL.test(command)) return refuse('a control character (newline, tab, ...)');

  const argv: string[] = [];
  let word: string | null = null; // null between words
  let lastBare = ''; // the last character added to `word` outside quotes ('' after a quoted part)
  let i = 0;
  while (i < command.length) {
    const c = command[i]!;
    if (c === ' ') {
      if (word !== null) argv.push(word);
      word = null;
      i++;
      continue;
    }
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return refuse('an unterminated single quote');
      word = (word ?? '') + command.slice(i + 1, end);
      lastBare = '';
      i = end + 1;
      continue;
    }
    if (c === '"') {
      let text = '';
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        const d = command[j]!;
        const inside = INSIDE_DOUBLE_QUOTES.get(d);
        if (inside !== undefined) return refuse(inside);
        if (d === '\\') {
          const next = command[j + 1];
          if (next !== '"' && next !== '\\') {
            return refuse('a backslash inside double quotes other than \\" or \\\\');
          }
          text += next;
          j++;
          continue;
        }
        text += d;
      }
      if (j >= command.length) return refuse('an unterminated double quote');
      word = (word ?? '') + text;
      lastBare = '';
      i = j + 1;
      continue;
    }
    if (c === '\\') {
      const next = command[i + 1];
      if (next === undefined) return refuse('a backslash at the end of the command');
      const special = SPECIAL.get(next);
      if (special !== undefined) return refuse(special);
      word = (word ?? '') + next;
      lastBare = '';
      i += 2;
      continue;
    }
    const special = SPECIAL.get(c);
    if (special !== undefined) return refuse(special);
    if (c === '#' && word === null) return refuse('`#` at the start of a word (a comment)');
    if (c === '~' && (word === null || lastBare === '=' || lastBare === ':')) {
      return refuse('`~` at the start of a word or after `=` or `:` (the home directory)');
    }
    word = (word ?? '') + c;
    lastBare = c;
    i++;
  }
  if (word !== null) argv.push(word);
  if (argv.length === 0) return refuse('an empty command');
  if (ASSIGNMENT.test(argv[0]!)) return refuse('a variable assignment before the command (`NAME=value`)');
  return { ok: true, argv };
}

// --- deciding -----------------------------------------------------------------------------------------------

/**
 * Commands that run code the repository defines (package scripts, build files, test configs) or run any other
 * program: the model can Write that code first, so the allow-list holding `npm test` would let it run anything.
 * Auto-allowed only inside a sandbox. Not exhaustive: an allow-list entry naming another tool that loads the
 * repository's code is its owner's call. Any argv[0] containing `/` (a script or program by path) counts too.
 */
const SCRIPT_RUNNERS = [
  'npm',
  'npx',
  'yarn',
  'pnpm',
  'bun',
  'corepack',
  'make',
  'cmake',
  'ninja',
  'pytest',
  'pip',
  'pip3',
  'tox',
  'nox',
  'poetry',
  'uv',
  'cargo',
  'go',
  'mvn',
  'gradle',
  'bundle',
  'rake',
  'composer',
  'dotnet',
  'jest',
  'vitest',
  'mocha',
  'eslint',
  'prettier',
];
const CODE_RUNNERS = [
  'node',
  'deno',
  'tsx',
  'ts-node',
  'python',
  'python3',
  'rustc',
  'ruby',
  'perl',
  'php',
  'bash',
  'sh',
  'zsh',
  'env',
  'xargs',
  'timeout',
  'nice',
  'nohup',
  'sudo',
  'su',
  'doas',
  'chroot',
  'setsid',
  'stdbuf',
  'flock',
  'watch',
  'eval',
  'exec',
  'source',
  '.',
  'command',
  'builtin',
];
const RUNS_REPOSITORY_CODE: ReadonlyMap<string, string> = new Map([
  ...SCRIPT_RUNNERS.map((name) => [name, 'runs scripts the repository defines'] as const),
  ...CODE_RUNNERS.map((name) => [name, 'runs other programs or code'] as const),
]);

/**
 * Options refused in any argument of any command, with what they do. They make a command read or write
 * outside the worktree, or run another program; most are git's, the rest common elsewhere. A long option is
 * refused as `--opt` and `--opt=value` (and `--opt value`: the name alone is enough), and also when it is a
 * prefix of one of these (git accepts unambiguous abbreviations: `--no-inde`), except `--text` and `--glob`;
 * every `--output*` option is refused (`--output`, `--output-directory`, `--output-indicator-new`, ...).
 */
const REFUSED_LONG: ReadonlyMap<string, string> = new Map([
  ['no-index', 'lets git diff compare any files on the host'],
  ['output', 'writes a file'],
  ['output-directory', 'writes files'],
  ['git-dir', 'points git at another repository'],
  ['work-tree', 'points git at another directory'],
  ['namespace', 'points git at other refs'],
  ['config', 'changes the configuration (which can run programs)'],
  ['config-env', 'changes the configuration (which can run programs)'],
  ['exec-path', 'makes git run programs from another directory'],
  ['exec', 'runs another program'],
  ['upload-pack', 'runs another program'],
  ['receive-pack', 'runs another program'],
  ['ext-diff', 'runs an external diff program'],
  ['textconv', 'runs text conversion programs'],
  ['open-files-in-pager', 'runs a pager program'],
  ['global', 'reads or writes a configuration file outside the worktree'],
  ['system', 'reads or writes a configuration file outside the worktree'],
  ['file', 'reads or writes another file'],
  ['template', 'copies files from another directory'],
]);

/** Options that are prefixes of refused ones but options of their own (git takes an exact name as itself). */
const OWN_OPTIONS: ReadonlySet<string> = new Set(['text', 'glob']);

/**
 * Short options refused, alone or anywhere in a cluster (`-C`, `-lo`, `-oX`): `-C` changes directory (git, tar,
 * make), `-c` sets configuration or runs a command string (git, sh), `-o` writes a file (sort, curl, compilers),
 * `-O` runs a pager (git grep) or reads an order file (git diff). A cluster also holding an attached value is
 * refused when the value contains one of these letters: a false positive only costs an approval.
 */
const REFUSED_SHORT: ReadonlyMap<string, string> = new Map([
  ['C', 'changes the directory the command works in'],
  ['c', 'sets configuration or runs a command string'],
  ['o', 'writes a file'],
  ['O', 'runs a pager or reads another file'],
]);

/**
 * Whether `command` may run in `auto` mode without a person's approval under `allowList`, and if not, why.
 *
 * 1. `command` and each entry are parsed by `parseShellWords`; an entry that does not parse never matches.
 * 2. argv must start with some entry's argv, word for word: `ls` allows `ls -la` but not `lsblk`, and
 *    `git status` does not allow `git push`.
 * 3. A command that runs repository-defined code (`npm`, `make`, `python`, ..., or a path like `./gradlew`) is
 *    allowed only when `opts.sandboxed`.
 * 4. `git` must not have options before its subcommand (`-C`, `-c`, `--git-dir`, `-p`/`--paginate`, ...).
 * 5. Every argument after the command name (the entry's own words too: an entry cannot grant what the rules
 *    refuse, and arguments after `--` are checked as well) must not be or contain an absolute path (`/x`,
 *    `--opt=/x`, `-I/x`, `a:/x`, `a,/x`), must have no `..` component (`../x`, `a/../b`, `--opt=../x`), and must
 *    not be one of the refused options above.
 */
export function autoAllowed(
  command: string,
  allowList: readonly string[],
  opts: AutoAllowOptions,
): AutoAllowed {
  const refuse = (reason: string): AutoAllowed => ({ allowed: false, reason });
  if (typeof command !== 'string') return refuse('the command is not a string');
  const parsed = parseShellWords(command);
  if (!parsed.ok) return refuse(parsed.reason);
  const { argv } = parsed;

  const listed = allowList.some((entry) => {
    if (typeof entry !== 'string') return false;
    const words = parseShellWords(entry);
    return words.ok && words.argv.every((w, i) => argv[i] === w);
  });
  if (!listed) return refuse('the command is not on the allow-list (execute.bash_allow_list)');

  const name = argv[0]!;
  if (!opts.sandboxed) {
    const runs = name.includes('/') ? 'runs a program by its path' : RUNS_REPOSITORY_CODE.get(name);
    if (runs !== undefined) return refuse(`${name} ${runs}; auto-allowed only inside the sandbox`);
  }

  if (baseName(name) === 'git' && argv[1]?.startsWith('-')) {
    return refuse(`${argv[1]} before git's subcommand: git's global options are refused`);
  }
  for (const arg of argv.slice(1)) {
    const problem = argumentProblem(arg);
    if (problem !== null) return refuse(problem);
  }
  return { allowed: true, argv };
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Why `arg` is refused, or null. */
function argumentProblem(arg: string): string | null {
  if (arg.startsWith('/') || /[=:,]\//.test(arg) || /^-[A-Za-z0-9]+\//.test(arg)) {
    return `${arg} names an absolute path (outside the worktree)`;
  }
  if (arg.split(/[/=:,]/).includes('..')) return `${arg} has a .. path component (outside the worktree)`;

  if (arg.startsWith('--')) {
    const option = arg.slice(2).split('=')[0]!;
    if (option === '') return null; // `--`: the end of the options
    const exact =
      REFUSED_LONG.get(option) ?? (option.startsWith('output') ? REFUSED_LONG.get('output') : undefined);
    if (exact !== undefined) return `--${option} ${exact} (refused option)`;
    if (OWN_OPTIONS.has(option)) return null;
    for (const [refused, what] of REFUSED_LONG) {
      if (refused.startsWith(option)) {
        return `--${option} (as --${refused}) ${what} (refused option)`;
      }
    }
    return null;
  }
  if (arg.startsWith('-') && arg.length > 1) {
    for (const letter of arg.slice(1)) {
      const what = REFUSED_SHORT.get(letter);
      if (what !== undefined) {
        const where = arg.length === 2 ? '' : ` (in ${arg})`;
        return `-${letter}${where} ${what} (refused option)`;
      }
    }
  }
  return null;
}

/**
 * The first argument of `argv` (after the command name) that names an existing path whose real path lies
 * outside `root` (a symbolic link in the worktree that points out of it), with the reason; null when none does.
 * Relative arguments resolve against `cwd`; the values of `--opt=value` arguments are checked as well.
 */
export async function linksOutside(
  argv: readonly string[],
  cwd: string,
  root: string,
): Promise<string | null> {
  const inside = (p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
  for (const arg of argv.slice(1)) {
    const candidates = arg.startsWith('-')
      ? arg.includes('=')
        ? [arg.slice(arg.indexOf('=') + 1)]
        : []
      : [arg];
    for (const candidate of candidates) {
      if (candidate === '') continue;
      let real: string;
      try {
        real = await realpath(resolve(cwd, candidate));
      } catch {
        continue; // does not exist (yet): nothing to follow
      }
      if (!inside(real)) return `${arg} leads out of the worktree through a symbolic link`;
    }
  }
  return null;
}
