import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_BASH_LIMITS,
  DEFAULT_EXEC_LIMITS,
  runBash,
  runEdit,
  runWrite,
  safeEnv,
} from '../../../src/agent/tools/execute-tools.js';
import {
  runGlob,
  runGrep,
  runRead,
  validatePlan,
  validateQuestions,
} from '../../../src/agent/tools/index.js';
import { expectNoLeak, type Fixture, makeFixture } from './fixture.js';

// A model trained on Claude Code sends fields drydock does not know (or has no use for). Every tool ignores
// them and answers as if they were not there: never a crash, never a refusal.

const EXTRA = { some_future_field: { nested: [1, 2] }, dangerouslyDisableSandbox: true };

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture('drydock-extra-');
  fx.write('src/a.ts', 'export const a = 1;\n');
});

afterEach(() => fx.cleanup());

describe('an unknown extra field in a tool input is ignored', () => {
  it('Read', async () => {
    const result = await runRead(fx.ws, { file_path: 'src/a.ts', ...EXTRA }, fx.limits);
    expect(result).toEqual({ content: '     1\texport const a = 1;', isError: false });
  });

  it('Glob', async () => {
    const result = await runGlob(fx.ws, { pattern: '**/*.ts', ...EXTRA }, fx.limits);
    expect(result).toEqual({ content: 'src/a.ts', isError: false });
  });

  it('Grep', async () => {
    const result = await runGrep(
      fx.ws,
      { pattern: 'const', output_mode: 'content', include: '*.md', ...EXTRA },
      fx.limits,
    );
    expectNoLeak(result.content, fx);
    expect(result).toEqual({ content: 'src/a.ts:1:export const a = 1;', isError: false });
  });

  it('AskUserQuestion', () => {
    const question = {
      question: 'Which database?',
      header: 'Database',
      options: [
        { label: 'Postgres', description: 'the existing one' },
        { label: 'SQLite', description: 'a local file' },
      ],
      multiSelect: false,
    };
    const result = validateQuestions({
      questions: [{ ...question, ...EXTRA, options: question.options.map((o) => ({ ...o, ...EXTRA })) }],
      ...EXTRA,
    });
    expect(result).toEqual({ ok: true, value: { questions: [question] } });
  });

  it('ExitPlanMode', () => {
    expect(validatePlan({ plan: '# Plan', ...EXTRA })).toEqual({
      ok: true,
      value: { plan: '# Plan', source: 'input' },
    });
  });

  it('Write', async () => {
    const result = await runWrite(
      fx.ws,
      { file_path: 'src/b.ts', content: 'b\n', ...EXTRA },
      DEFAULT_EXEC_LIMITS,
    );
    expect(result.isError).toBe(false);
    expect(result.changedPath).toBe('src/b.ts');
    expect(readFileSync(join(fx.root, 'src/b.ts'), 'utf8')).toBe('b\n');
  });

  it('Edit', async () => {
    const result = await runEdit(
      fx.ws,
      { file_path: 'src/a.ts', old_string: '= 1', new_string: '= 2', ...EXTRA },
      DEFAULT_EXEC_LIMITS,
    );
    expect(result.isError).toBe(false);
    expect(readFileSync(join(fx.root, 'src/a.ts'), 'utf8')).toBe('export const a = 2;\n');
  });

  it('Bash', async () => {
    const result = await runBash(
      { command: 'echo hi', ...EXTRA },
      { cwd: fx.ws.root, ...DEFAULT_BASH_LIMITS, env: safeEnv(process.env, { HOME: fx.ws.root }) },
    );
    expect(result).toEqual({ content: 'hi\n\nexit code 0', isError: false, exitCode: 0, timedOut: false });
  });
});
