import { describe, expect, it } from 'vitest';
import {
  type AskUserQuestionInput,
  checkAnswers,
  exitPlanModeInput,
  validatePlan,
  validateQuestions,
} from '../../src/agent/tools/plan-tools.js';

function option(label: string) {
  return { label, description: `choose ${label}` };
}

function question(text: string, overrides: Record<string, unknown> = {}) {
  return {
    question: text,
    header: 'Database',
    options: [option('Postgres'), option('SQLite')],
    multiSelect: false,
    ...overrides,
  };
}

function errorOf(input: unknown): string {
  const result = validateQuestions(input);
  if (result.ok) throw new Error('expected validation to fail');
  return result.error;
}

describe('validateQuestions', () => {
  it('accepts a valid input and returns it', () => {
    const input = {
      questions: [
        question('Which database?'),
        question('Which features?', {
          header: 'Features',
          multiSelect: true,
          options: ['A', 'B', 'C', 'D'].map(option),
        }),
      ],
    };
    expect(validateQuestions(input)).toEqual({ ok: true, value: input });
  });

  it('accepts a 12-character header and 4 questions', () => {
    const four = ['a?', 'b?', 'c?', 'd?'].map((q) => question(q, { header: 'x'.repeat(12) }));
    expect(validateQuestions({ questions: four }).ok).toBe(true);
  });

  it('rejects 0 questions and 5 questions', () => {
    expect(errorOf({ questions: [] })).toMatch(/^AskUserQuestion: invalid input\n {2}- questions: .*>=1/);
    const five = ['a?', 'b?', 'c?', 'd?', 'e?'].map((q) => question(q));
    expect(errorOf({ questions: five })).toMatch(/- questions: .*<=4/);
  });

  it('rejects 1 option and 5 options', () => {
    expect(errorOf({ questions: [question('q?', { options: [option('only')] })] })).toMatch(
      /- questions\[0\]\.options: .*>=2/,
    );
    expect(
      errorOf({ questions: [question('q?', { options: ['1', '2', '3', '4', '5'].map(option) })] }),
    ).toMatch(/- questions\[0\]\.options: .*<=4/);
  });

  it('rejects a header of 13 characters', () => {
    expect(errorOf({ questions: [question('q?', { header: 'x'.repeat(13) })] })).toMatch(
      /- questions\[0\]\.header: .*<=12/,
    );
  });

  it('rejects a missing multiSelect', () => {
    const { multiSelect: _, ...rest } = question('q?');
    expect(errorOf({ questions: [rest] })).toMatch(/- questions\[0\]\.multiSelect: /);
  });

  it('rejects duplicate question texts and option labels, unknown keys and non-objects', () => {
    expect(errorOf({ questions: [question('same?'), question('same?')] })).toMatch(
      /- questions\[1\]\.question: duplicate question text/,
    );
    expect(errorOf({ questions: [question('q?', { options: [option('A'), option('A')] })] })).toMatch(
      /- questions\[0\]\.options\[1\]\.label: duplicate option label "A"/,
    );
    expect(errorOf({ questions: [question('q?')], answers: {} })).toMatch(/answers/);
    expect(errorOf({ questions: [{ ...question('q?'), extra: 1 }] })).toMatch(/extra/);
    expect(errorOf({ questions: [question('q?', { options: [{ label: 'A' }, option('B')] })] })).toMatch(
      /options\[0\]\.description/,
    );
    expect(errorOf(null)).toMatch(/^AskUserQuestion: invalid input\n {2}- \(input\): /);
    expect(errorOf({ questions: [question('')] })).toMatch(/questions\[0\]\.question/);
  });
});

describe('checkAnswers', () => {
  const asked: AskUserQuestionInput = {
    questions: [
      question('Which database?'),
      question('Which features?', {
        header: 'Features',
        multiSelect: true,
        options: ['Auth', 'Search', 'Export'].map(option),
      }),
    ] as AskUserQuestionInput['questions'],
  };

  it('accepts one label per single-choice question and distinct labels for multiSelect', () => {
    const answers = { 'Which database?': 'SQLite', 'Which features?': ['Search', 'Auth'] };
    expect(checkAnswers(asked, answers)).toEqual({ ok: true, value: answers });
  });

  it('rejects a label that is not among the options', () => {
    expect(checkAnswers(asked, { 'Which database?': 'MySQL', 'Which features?': ['Auth'] })).toEqual({
      ok: false,
      error: '"MySQL" is not an option of question "Which database?" (choose from "Postgres", "SQLite")',
    });
    expect(
      checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Auth', 'Nope'] }),
    ).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^"Nope" is not an option of question "Which features\?"/),
    });
  });

  it('rejects a missing answer', () => {
    expect(checkAnswers(asked, { 'Which database?': 'SQLite' })).toEqual({
      ok: false,
      error: 'question "Which features?" is not answered',
    });
  });

  it('requires a non-empty array for multiSelect and a string otherwise', () => {
    expect(checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': 'Auth' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/takes a non-empty array of labels/),
    });
    expect(checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': [] })).toMatchObject({
      ok: false,
    });
    expect(checkAnswers(asked, { 'Which database?': ['SQLite'], 'Which features?': ['Auth'] })).toMatchObject(
      {
        ok: false,
        error: expect.stringMatching(/takes one label as a string/),
      },
    );
  });

  it('rejects a label chosen twice', () => {
    expect(checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Auth', 'Auth'] })).toEqual(
      {
        ok: false,
        error: '"Auth" is chosen twice for question "Which features?"',
      },
    );
  });

  it('rejects an unknown question key, and answers that are not an object', () => {
    expect(
      checkAnswers(asked, {
        'Which database?': 'SQLite',
        'Which features?': ['Auth'],
        'Which colour?': 'Red',
      }),
    ).toEqual({ ok: false, error: 'unknown question "Which colour?"' });
    expect(checkAnswers(asked, JSON.parse('{"__proto__": "x"}'))).toEqual({
      ok: false,
      error: 'unknown question "__proto__"',
    });
    for (const bad of [null, 'SQLite', ['SQLite'], 42]) expect(checkAnswers(asked, bad).ok).toBe(false);
  });

  it('keeps a question text such as __proto__ as a plain key', () => {
    const odd: AskUserQuestionInput = {
      questions: [question('__proto__')] as AskUserQuestionInput['questions'],
    };
    const result = checkAnswers(odd, JSON.parse('{"__proto__": "SQLite"}'));
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(Object.keys(result.value)).toEqual(['__proto__']);
      expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    }
  });
});

describe('ExitPlanMode input', () => {
  it('takes a non-empty plan of at most 100 000 characters', () => {
    expect(exitPlanModeInput.safeParse({ plan: '# Plan\n1. do it' }).success).toBe(true);
    expect(exitPlanModeInput.safeParse({ plan: '' }).success).toBe(false);
    expect(exitPlanModeInput.safeParse({ plan: 'x'.repeat(100_001) }).success).toBe(false);
    expect(exitPlanModeInput.safeParse({ plan: 'x', extra: true }).success).toBe(false);
    expect(validatePlan({})).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^ExitPlanMode: invalid input\n {2}- plan: /),
    });
  });
});
