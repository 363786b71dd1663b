import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { namedPaths, planFootprint } from '../../src/agent/footprint.js';
import { Workspace } from '../../src/agent/tools/index.js';
import type { ConversationMessage } from '../../src/domain/types.js';
import { tempDir } from '../support/harness.js';

// A plan's footprint (src/agent/footprint.ts) from its conversation's tool calls, resolved like the tools
// resolve them, on a real directory.

let tmp: { path: string; remove(): void };
let ws: Workspace;
beforeEach(async () => {
  tmp = tempDir();
  const root = join(tmp.path, 'ws');
  mkdirSync(join(root, 'src', 'lib'), { recursive: true });
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(join(root, 'src', 'a.ts'), 'a');
  writeFileSync(join(root, 'docs', 'guide.md'), 'g');
  writeFileSync(join(tmp.path, 'outside.txt'), 'o');
  ws = await Workspace.open(root);
});
afterEach(() => tmp.remove());

const MEMORY = ['.claude/CLAUDE.md', 'AGENTS.md', 'CLAUDE.md'];

/** One assistant turn of tool calls (as stored) and its user turn. */
const turn = (...uses: { name: string; input: unknown }[]): ConversationMessage[] => [
  { role: 'user', content: [{ type: 'text', text: 'task' }] },
  {
    role: 'assistant',
    content: uses.map((u, i) => ({ type: 'tool_use', id: `t${i}`, name: u.name, input: u.input })),
  },
];

describe('planFootprint', () => {
  it('records what Read, Grep and Glob read, and the memory files, workspace-relative', async () => {
    const fp = await planFootprint(
      ws,
      turn(
        { name: 'Read', input: { file_path: 'src/a.ts' } },
        // An absolute path inside the workspace, and a file that does not exist yet: both count.
        { name: 'Read', input: { file_path: join(ws.root, 'docs', 'guide.md') } },
        { name: 'Read', input: { file_path: 'src/missing.ts' } },
        { name: 'Grep', input: { pattern: 'x', path: 'src/lib' } },
        { name: 'Grep', input: { pattern: 'y' } },
        { name: 'Glob', input: { pattern: './**/*.md', path: 'docs' } },
        // Refused by the plan phase's gate, and an input the tool refused: they read nothing.
        { name: 'Bash', input: { command: 'cat /etc/passwd' } },
        { name: 'Read', input: { nope: 1 } },
        { name: 'AskUserQuestion', input: {} },
      ),
      '# Plan\n',
    );
    expect(fp).toEqual({
      files: [...MEMORY, 'docs/guide.md', 'src/a.ts', 'src/missing.ts'].sort(),
      dirs: ['.', 'src/lib'],
      globs: [{ dir: 'docs', pattern: '**/*.md' }],
    });
  });

  it('a symbolic link counts as the file it leads to', async () => {
    symlinkSync('src/a.ts', join(ws.root, 'link.ts'));
    const fp = await planFootprint(ws, turn({ name: 'Read', input: { file_path: 'link.ts' } }), 'x');
    expect(fp?.files).toContain('src/a.ts');
    expect(fp?.files).not.toContain('link.ts');
  });

  it('adds the files and directories the plan text names', async () => {
    const fp = await planFootprint(
      ws,
      turn(),
      '1. Edit `src/a.ts:12` and create src/new.ts.\n2. Update the docs/ folder (see https://example.com/x.md), e.g. README.md!\n3. Not ../outside.txt',
    );
    expect(fp?.files).toEqual(expect.arrayContaining(['src/a.ts', 'src/new.ts', 'README.md']));
    expect(fp?.dirs).toEqual(['docs']);
    expect(JSON.stringify(fp)).not.toContain('outside');
    expect(JSON.stringify(fp)).not.toContain('example.com');
  });

  it('is unknown (null) after an MCP call, or a path outside the workspace', async () => {
    expect(await planFootprint(ws, turn({ name: 'mcp__notes__read', input: { id: 1 } }), 'x')).toBeNull();
    expect(
      await planFootprint(
        ws,
        turn({ name: 'Read', input: { file_path: join(tmp.path, 'outside.txt') } }),
        'x',
      ),
    ).toBeNull();
    expect(
      await planFootprint(ws, turn({ name: 'Grep', input: { pattern: 'x', path: '../' } }), 'x'),
    ).toBeNull();
  });
});

describe('namedPaths', () => {
  it('takes words with a slash or an extension, without line numbers or sentence punctuation', () => {
    expect(namedPaths('Change `lib/x.ts:3-9`, then README.md. Version 1.2.3 stays; see src/.')).toEqual([
      'lib/x.ts',
      'README.md',
      'src/',
    ]);
  });
});
