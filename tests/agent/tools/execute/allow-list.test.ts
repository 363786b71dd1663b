import { describe, expect, it } from 'vitest';
import { autoAllowed, parseShellWords } from '../../../../src/agent/tools/execute-tools.js';
import { defaultConfig } from '../../../../src/config/load.js';

// The default list, as shipped: the escapes below were all auto-allowed by it under the old string-prefix check.
const defaults = defaultConfig().execute.bash_allow_list;
const outside = { sandboxed: false };
const inside = { sandboxed: true };

describe('parseShellWords', () => {
  it.each<[string, string[]]>([
    ['ls', ['ls']],
    ['  git   status  ', ['git', 'status']],
    ['ls -la src', ['ls', '-la', 'src']],
    ["ls 'a file'", ['ls', 'a file']],
    ['ls "a file"', ['ls', 'a file']],
    ["ls '$HOME'", ['ls', '$HOME']],
    ["ls 'a;b|c>d*e{f}`g`!h'", ['ls', 'a;b|c>d*e{f}`g`!h']],
    ['ls "say \\"hi\\" \\\\ there"', ['ls', 'say "hi" \\ there']],
    ['ls "*.ts" "{a,b}" "[x]"', ['ls', '*.ts', '{a,b}', '[x]']],
    ['ls a\'b\'"c"d', ['ls', 'abcd']],
    ["ls ''", ['ls', '']],
    ['ls a\\ b', ['ls', 'a b']],
    ["ls it\\'s", ['ls', "it's"]],
    ['ls \\#x \\~', ['ls', '#x', '~']],
    ['git log HEAD~1 a#b', ['git', 'log', 'HEAD~1', 'a#b']],
    ["ls ''#x '~'", ['ls', '#x', '~']],
    ['npm run lint -- --fix', ['npm', 'run', 'lint', '--', '--fix']],
  ])('%j → %j', (command, argv) => {
    expect(parseShellWords(command)).toEqual({ ok: true, argv });
  });

  it.each<[string, RegExp]>([
    ['', /empty/],
    ['   ', /empty/],
    ['ls $HOME', /`\$`/],
    ['ls /proc/$PPID', /`\$`/],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell command, not a template
    ['ls ${x}', /`\$`/],
    ['ls $(id)', /`\$`/],
    ['ls "$HOME"', /`\$` inside double quotes/],
    ['ls \\$HOME', /`\$`/],
    ['ls `id`', /backtick/],
    ['ls "`id`"', /backtick inside double quotes/],
    ['git status; rm -rf x', /`;`/],
    ['ls && id', /`&`/],
    ['ls & id', /`&`/],
    ['ls | sh', /`\|`/],
    ['ls > out', /redirection/],
    ['ls < in', /redirection/],
    ['ls <(id)', /redirection/],
    ['(ls)', /subshell/],
    ['ls\nid', /control character/],
    ['ls\rid', /control character/],
    ['ls\tsrc', /control character/],
    ['ls\0', /control character/],
    ['ls *', /`\*`/],
    ['ls src/*.ts', /`\*`/],
    ['ls a?', /`\?`/],
    ['ls [ab]', /`\[`/],
    ['ls \\*', /`\*`/],
    ['ls {a,b}', /brace expansion/],
    ['ls a}', /brace expansion/],
    ['ls ~', /`~`/],
    ['ls ~root', /`~`/],
    ['ls a=~', /`~`/],
    ['ls a:~/x', /`~`/],
    ['ls #x', /comment/],
    ['ls !x', /`!`/],
    ['ls "!x"', /`!` inside double quotes/],
    ["ls 'x", /unterminated single quote/],
    ['ls "x', /unterminated double quote/],
    ['ls "a\\nb"', /backslash inside double quotes/],
    ['ls x\\', /backslash at the end/],
    ['FOO=1 ls', /variable assignment/],
    ['PATH+=:x ls', /variable assignment/],
  ])('refuses %j', (command, reason) => {
    const parsed = parseShellWords(command);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toMatch(reason);
  });
});

describe('autoAllowed', () => {
  it.each<[string, string[]]>([
    ['git status', ['git', 'status']],
    ['git status --short', ['git', 'status', '--short']],
    ['git diff', ['git', 'diff']],
    ['git diff HEAD~1 -- src/a.ts', ['git', 'diff', 'HEAD~1', '--', 'src/a.ts']],
    ['git diff --stat HEAD~2..HEAD', ['git', 'diff', '--stat', 'HEAD~2..HEAD']],
    ['git diff --text', ['git', 'diff', '--text']],
    ['git log --oneline -5', ['git', 'log', '--oneline', '-5']],
    ['git log -p --format=%H%n%s -- src', ['git', 'log', '-p', '--format=%H%n%s', '--', 'src']],
    ['ls', ['ls']],
    ['ls -la src', ['ls', '-la', 'src']],
    ["ls '$HOME'", ['ls', '$HOME']],
    ['ls "a file.ts" ./src', ['ls', 'a file.ts', './src']],
  ])('allows %j with the default list', (command, argv) => {
    expect(autoAllowed(command, defaults, outside)).toEqual({ allowed: true, argv });
  });

  it.each<[string, string[]]>([
    ['npm test', ['npm', 'test']],
    ['npm run lint', ['npm', 'run', 'lint']],
    ['npm run lint -- --fix', ['npm', 'run', 'lint', '--', '--fix']],
    ['npm run build', ['npm', 'run', 'build']],
  ])('allows %j inside the sandbox', (command, argv) => {
    expect(autoAllowed(command, defaults, inside)).toEqual({ allowed: true, argv });
  });

  // Each of these was auto-allowed by the old matcher with the default list.
  it.each<[string, RegExp]>([
    ['git diff --no-index --text /etc/passwd /dev/null', /--no-index .*any files on the host/],
    ['git diff --no-index --output=/tmp/x a b', /--no-index/],
    ['git diff --no-inde a b', /--no-inde \(as --no-index\)/],
    ['git diff --output=x', /--output writes a file/],
    ['git log --output=/tmp/x', /\/tmp\/x names an absolute path/],
    ['git log --output /tmp/x', /--output writes a file/],
    ['git log --outp=x', /--outp \(as --output\) writes a file/],
    ['git log --output-directory=out', /--output-directory/],
    ['git diff --output-indicator-new=x', /--output-indicator-new/],
    ['git diff --ext-diff', /--ext-diff runs an external diff program/],
    ['git diff --textconv', /--textconv runs text conversion/],
    ['git log --exec-path=x', /--exec-path/],
    ['git diff -O x', /-O runs a pager/],
    ['git log -Cfoo', /-C \(in -Cfoo\)/],
    ['git diff -c', /-c sets configuration/],
    ['ls -lo', /-o \(in -lo\) writes a file/],
    ['ls -oX', /-o \(in -oX\)/],
    ['ls /proc/$PPID', /`\$`/],
    ['ls $HOME', /`\$`/],
    ['ls ~', /`~`/],
    ['ls ..', /\.\. has a \.\. path component/],
    ['ls ../..', /\.\.\/\.\. has a \.\. path component/],
    ['ls a/../../b', /a\/\.\.\/\.\.\/b has a \.\. path component/],
    ['git diff HEAD -- ../x', /\.\.\/x has a \.\. path component/],
    ['git log --foo=../y', /--foo=\.\.\/y has a \.\. path component/],
    ['ls /', /\/ names an absolute path/],
    ["ls '/etc'", /\/etc names an absolute path/],
    ['ls "/etc"', /\/etc names an absolute path/],
    ['ls --foo=/etc', /--foo=\/etc names an absolute path/],
    ['ls -I/etc', /-I\/etc names an absolute path/],
    ['git diff HEAD:/etc', /absolute path/],
    ['ls *', /`\*`/],
    ['npm test', /^npm runs scripts the repository defines; auto-allowed only inside the sandbox$/],
    ['npm run lint -- --fix', /^npm runs scripts the repository defines/],
  ])('refuses %j with the default list', (command, reason) => {
    const decision = autoAllowed(command, defaults, outside);
    expect(decision.allowed).toBe(false);
    expect(decision.allowed ? '' : decision.reason).toMatch(reason);
  });

  // Refused before too; kept so that the parser does not let them back in.
  it.each<[string, RegExp]>([
    ['FOO=1 ls', /variable assignment/],
    ['git status; rm -rf x', /`;`/],
    ['git status\nrm -rf x', /control character/],
    ['git status && rm -rf x', /`&`/],
    ['ls | sh', /`\|`/],
    ['ls > x', /redirection/],
  ])('still refuses %j', (command, reason) => {
    const decision = autoAllowed(command, defaults, outside);
    expect(decision.allowed).toBe(false);
    expect(decision.allowed ? '' : decision.reason).toMatch(reason);
  });

  it.each<[string, RegExp]>([
    ['lsblk', /not on the allow-list/],
    ['ls-files', /not on the allow-list/],
    ['npm testing', /not on the allow-list/],
    ['npm install', /not on the allow-list/],
    ['git push', /not on the allow-list/],
    ['git', /not on the allow-list/],
    ['rm -rf x', /not on the allow-list/],
    ['git -C / status', /not on the allow-list/],
    ['git -c core.pager=x log', /not on the allow-list/],
  ])('refuses %j as not listed', (command, reason) => {
    const decision = autoAllowed(command, defaults, inside);
    expect(decision.allowed).toBe(false);
    expect(decision.allowed ? '' : decision.reason).toMatch(reason);
  });

  it('refuses every git option before the subcommand, even when `git` alone is listed', () => {
    for (const command of [
      'git -C / status',
      'git -c core.pager=x log',
      'git --git-dir=x status',
      'git --work-tree=x status',
      'git -p log',
      'git --paginate log',
      'git --no-pager log',
      'git --exec-path=x status',
    ]) {
      const decision = autoAllowed(command, ['git'], inside);
      expect(decision, command).toMatchObject({ allowed: false });
      expect(decision.allowed ? '' : decision.reason, command).toMatch(/before git's subcommand/);
    }
    // After the subcommand -p is git log's patch option.
    expect(autoAllowed('git log -p', ['git'], inside).allowed).toBe(true);
  });

  it('refuses each listed option in both its forms, whatever the command', () => {
    const long = [
      'no-index',
      'output',
      'output-directory',
      'git-dir',
      'work-tree',
      'namespace',
      'config',
      'config-env',
      'exec-path',
      'exec',
      'upload-pack',
      'receive-pack',
      'ext-diff',
      'textconv',
      'open-files-in-pager',
      'global',
      'system',
      'file',
      'template',
    ];
    for (const option of long) {
      for (const command of [`tool sub --${option} x`, `tool sub --${option}=x`]) {
        const decision = autoAllowed(command, ['tool'], inside);
        expect(decision, command).toMatchObject({ allowed: false });
        expect(decision.allowed ? '' : decision.reason, command).toContain(`--${option} `);
      }
    }
    for (const letter of ['C', 'c', 'o', 'O']) {
      for (const command of [`tool sub -${letter} x`, `tool sub -${letter}x`, `tool sub -l${letter}`]) {
        const decision = autoAllowed(command, ['tool'], inside);
        expect(decision, command).toMatchObject({ allowed: false });
        expect(decision.allowed ? '' : decision.reason, command).toContain(`-${letter}`);
      }
    }
  });

  it('auto-allows commands that run repository code only inside the sandbox', () => {
    const list = ['make', 'python3 -m pytest', './gradlew test', 'env', 'bash', 'sudo'];
    for (const command of ['make', 'python3 -m pytest', './gradlew test', 'env', 'bash', 'sudo']) {
      const decision = autoAllowed(command, list, outside);
      expect(decision, command).toMatchObject({ allowed: false });
      expect(decision.allowed ? '' : decision.reason, command).toMatch(
        /auto-allowed only inside the sandbox$/,
      );
      expect(autoAllowed(command, list, inside), command).toMatchObject({ allowed: true });
    }
    expect(autoAllowed('./gradlew test', list, outside)).toEqual({
      allowed: false,
      reason: './gradlew runs a program by its path; auto-allowed only inside the sandbox',
    });
  });

  it('checks the arguments inside the sandbox too', () => {
    expect(autoAllowed('npm test -- --output=/tmp/x', defaults, inside)).toMatchObject({ allowed: false });
    expect(autoAllowed('npm test --prefix ../x', defaults, inside)).toMatchObject({ allowed: false });
    expect(autoAllowed('git diff --no-index a b', defaults, inside)).toMatchObject({ allowed: false });
  });

  it('matches entries word for word, after parsing them the same way', () => {
    expect(autoAllowed('ls', [' ls '], outside).allowed).toBe(true);
    expect(autoAllowed('git  status', ['git status'], outside).allowed).toBe(true);
    expect(autoAllowed("git 'status'", ['git status'], outside).allowed).toBe(true);
    expect(autoAllowed('ls "a b"', ['ls a'], outside).allowed).toBe(false);
    expect(autoAllowed("ls 'a b'", ["ls 'a b'"], outside).allowed).toBe(true);
  });

  it('never matches an entry that does not parse, nor anything with an empty list', () => {
    for (const entry of ['', '  ', 'ls; rm', 'ls $HOME', 'FOO=1 ls', "ls 'x"]) {
      expect(autoAllowed('ls', [entry], outside).allowed, entry).toBe(false);
    }
    expect(autoAllowed('ls; rm', ['ls; rm'], outside).allowed).toBe(false);
    expect(autoAllowed('ls', [], outside).allowed).toBe(false);
  });

  it('refuses entries that grant what the argument rules refuse', () => {
    expect(autoAllowed('git -C / status', ['git -C / status'], inside)).toMatchObject({ allowed: false });
    expect(autoAllowed('ls /etc', ['ls /etc'], inside)).toMatchObject({ allowed: false });
  });
});
