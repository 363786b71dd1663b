import { describe, expect, it } from 'vitest';
import { matchesAllowList } from '../../../src/agent/tools/execute-tools.js';

const list = ['npm test', 'git status', 'ls', 'git diff', 'npx vitest run'];

describe('matchesAllowList', () => {
  it.each([
    ['ls'],
    ['npm test'],
    ['git status'],
    ['  git status  '],
    ['ls -la src'],
    ['npm test -- --reporter=dot'],
    ['git diff --stat HEAD~1'],
    ['npx vitest run tests/tools'],
    ['ls "a file with spaces"'],
    ['ls *.ts'],
  ])('allows %j', (cmd) => {
    expect(matchesAllowList(cmd, list)).toBe(true);
  });

  it.each([
    ['lsblk', 'word boundary: lsblk is not ls'],
    ['ls-files', 'word boundary'],
    ['npm testing', 'word boundary on the last word'],
    ['npm install', 'another subcommand'],
    ['git push', 'another subcommand'],
    ['git', 'less than an entry'],
    ['rm -rf /', 'not listed'],
    ['', 'empty'],
    ['   ', 'blank'],
    ['FOO=1 ls', 'an assignment first'],
    ['ls; rm -rf ~', 'chaining with ;'],
    ['ls && rm -rf ~', 'chaining with &&'],
    ['ls || rm -rf ~', 'chaining with ||'],
    ['ls & rm -rf ~', 'background &'],
    ['ls | sh', 'a pipe'],
    ['ls `rm -rf ~`', 'backticks'],
    ['ls $(rm -rf ~)', 'command substitution'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell command, not a template
    ['ls ${HOME}', 'parameter expansion with braces'],
    ['ls > out.txt', 'output redirection'],
    ['ls >> out.txt', 'appending redirection'],
    ['ls < /etc/passwd', 'input redirection'],
    ['ls <(rm -rf ~)', 'process substitution'],
    ['ls\nrm -rf ~', 'a newline'],
    ['ls\rrm -rf ~', 'a carriage return'],
    ['ls\trm', 'a tab'],
    ['ls (x)', 'parentheses'],
    ['git status\0; rm', 'a NUL byte'],
  ])('refuses %j (%s)', (cmd) => {
    expect(matchesAllowList(cmd, list)).toBe(false);
  });

  it('ignores blank entries and entries that are not simple commands', () => {
    expect(matchesAllowList('anything', [''])).toBe(false);
    expect(matchesAllowList('ls', ['', '  '])).toBe(false);
    expect(matchesAllowList('ls', [' ls '])).toBe(true);
    expect(matchesAllowList('ls; rm', ['ls; rm'])).toBe(false);
  });

  it('allows nothing with an empty list', () => {
    expect(matchesAllowList('ls', [])).toBe(false);
  });
});
