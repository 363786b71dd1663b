import { describe, expect, it } from 'vitest';
import {
  exitPlanModeInput,
  MAX_PLAN_CHARS,
  PLAN_MISSING,
  validatePlan,
  validateQuestions,
} from '../../../src/agent/tools/plan-tools.js';
import {
  type AskUserQuestionInput,
  checkAnswers,
  MAX_FREE_TEXT_CHARS,
  shortHeader,
} from '../../../src/domain/questions.js';

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

  it('accepts a header longer than 12 characters and keeps it whole; refuses an absurd or blank one', () => {
    const long = 'Authentication method';
    const result = validateQuestions({ questions: [question('q?', { header: long })] });
    expect(result).toMatchObject({ ok: true, value: { questions: [{ header: long }] } });
    expect(errorOf({ questions: [question('q?', { header: 'x'.repeat(201) })] })).toMatch(
      /- questions\[0\]\.header: .*<=200/,
    );
    expect(errorOf({ questions: [question('q?', { header: '  ' })] })).toMatch(/- questions\[0\]\.header: /);
  });

  it('keeps an option preview, and refuses one that is not a string', () => {
    const preview = '```ts\nconst db = new Pool();\n```';
    const input = {
      questions: [question('q?', { options: [{ ...option('Postgres'), preview }, option('SQLite')] })],
    };
    expect(validateQuestions(input)).toEqual({ ok: true, value: input });
    expect(
      errorOf({ questions: [question('q?', { options: [{ ...option('A'), preview: 7 }, option('B')] })] }),
    ).toMatch(/- questions\[0\]\.options\[0\]\.preview: /);
  });

  it('ignores unknown keys at every level (Claude Code sends answers and metadata)', () => {
    const input = {
      questions: [{ ...question('q?', { options: [{ ...option('A'), icon: 'x' }, option('B')] }), extra: 1 }],
      answers: {},
      metadata: { source: 'remember' },
    };
    const result = validateQuestions(input);
    expect(result).toEqual({
      ok: true,
      value: { questions: [question('q?', { options: ['A', 'B'].map(option) })] },
    });
  });

  it('takes a missing multiSelect as false, as Claude Code does, and checks answers as single-choice', () => {
    const { multiSelect: _, ...rest } = question('q?');
    const parsed = validateQuestions({ questions: [rest] });
    expect(parsed).toEqual({ ok: true, value: { questions: [{ ...rest, multiSelect: false }] } });
    if (!parsed.ok) return;
    expect(checkAnswers(parsed.value, { 'q?': 'A' })).toEqual({ ok: true, value: { 'q?': 'A' } });
    expect(checkAnswers(parsed.value, { 'q?': ['A', 'B'] })).toMatchObject({ ok: false });
  });

  it('rejects duplicate question texts and option labels, wrong types and non-objects', () => {
    expect(errorOf({ questions: [question('same?'), question('same?')] })).toMatch(
      /- questions\[1\]\.question: duplicate question text/,
    );
    expect(errorOf({ questions: [question('q?', { options: [option('A'), option('A')] })] })).toMatch(
      /- questions\[0\]\.options\[1\]\.label: duplicate option label "A"/,
    );
    expect(errorOf({ questions: [question('q?', { multiSelect: 'yes' })] })).toMatch(
      /- questions\[0\]\.multiSelect: /,
    );
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

  it('accepts a person\'s own text ("Other") for a single-choice question, trimmed', () => {
    expect(
      checkAnswers(asked, { 'Which database?': '  MySQL, we already run it  ', 'Which features?': ['Auth'] }),
    ).toEqual({
      ok: true,
      value: { 'Which database?': 'MySQL, we already run it', 'Which features?': ['Auth'] },
    });
    // A label with stray blanks is still the label.
    expect(checkAnswers(asked, { 'Which database?': ' SQLite ', 'Which features?': ['Auth'] })).toEqual({
      ok: true,
      value: { 'Which database?': 'SQLite', 'Which features?': ['Auth'] },
    });
  });

  it('accepts one own text among the labels of a multiSelect question, and no more than one', () => {
    expect(
      checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Auth', 'Audit log'] }),
    ).toEqual({ ok: true, value: { 'Which database?': 'SQLite', 'Which features?': ['Auth', 'Audit log'] } });
    expect(checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Audit log'] })).toEqual({
      ok: true,
      value: { 'Which database?': 'SQLite', 'Which features?': ['Audit log'] },
    });
    expect(
      checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Auth', 'Audit log', 'SSO'] }),
    ).toEqual({
      ok: false,
      error:
        'question "Which features?" takes at most one answer of your own besides its options ("Auth", "Search", "Export"); got "Audit log" and "SSO"',
    });
  });

  it('refuses blank answers, non-strings and an own text over the length limit', () => {
    expect(checkAnswers(asked, { 'Which database?': '   ', 'Which features?': ['Auth'] })).toEqual({
      ok: false,
      error:
        'question "Which database?" has a blank answer: give an option label ("Postgres", "SQLite") or your own text',
    });
    expect(
      checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Auth', ''] }),
    ).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^question "Which features\?" has a blank answer/),
    });
    expect(checkAnswers(asked, { 'Which database?': 42, 'Which features?': ['Auth'] })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^42 is not a valid answer to question "Which database\?"/),
    });
    expect(checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': [null] })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^null is not a valid answer to question "Which features\?"/),
    });
    const long = 'x'.repeat(MAX_FREE_TEXT_CHARS + 1);
    expect(checkAnswers(asked, { 'Which database?': long, 'Which features?': ['Auth'] })).toEqual({
      ok: false,
      error: `the answer to question "Which database?" is longer than ${MAX_FREE_TEXT_CHARS} characters`,
    });
    expect(
      checkAnswers(asked, { 'Which database?': 'x'.repeat(MAX_FREE_TEXT_CHARS), 'Which features?': ['Auth'] })
        .ok,
    ).toBe(true);
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
      error: expect.stringMatching(/takes a non-empty array of answers/),
    });
    expect(checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': [] })).toMatchObject({
      ok: false,
    });
    expect(checkAnswers(asked, { 'Which database?': ['SQLite'], 'Which features?': ['Auth'] })).toMatchObject(
      {
        ok: false,
        error: expect.stringMatching(/takes one answer as a string/),
      },
    );
  });

  it('rejects a label or text chosen twice (blanks aside)', () => {
    expect(
      checkAnswers(asked, { 'Which database?': 'SQLite', 'Which features?': ['Auth', ' Auth'] }),
    ).toEqual({ ok: false, error: '"Auth" is chosen twice for question "Which features?"' });
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
  it('takes a non-blank plan of at most 100 000 characters, ignoring extra fields', () => {
    expect(exitPlanModeInput.safeParse({ plan: '# Plan\n1. do it' }).success).toBe(true);
    expect(exitPlanModeInput.safeParse({ plan: '' }).success).toBe(false);
    expect(exitPlanModeInput.safeParse({ plan: ' \n ' }).success).toBe(false);
    expect(exitPlanModeInput.safeParse({ plan: 'x'.repeat(100_001) }).success).toBe(false);
    expect(exitPlanModeInput.parse({ plan: 'x', extra: true })).toEqual({ plan: 'x' });
  });
});

describe('validatePlan', () => {
  const TURN = 'Here is the plan:\n\n1. Add a cache table\n2. Test it';
  const THOUGHT = 'Plan: 1. Add a cache table 2. Test it';
  const text = (t: string) => ({ text: t, thinking: '' });

  it('takes the plan field as given, with or without the turn text, ignoring allowedPrompts', () => {
    const given = { ok: true, value: { plan: '# Plan', source: 'input' } };
    expect(validatePlan({ plan: '# Plan' })).toEqual(given);
    expect(validatePlan({ plan: '# Plan' }, { text: TURN, thinking: THOUGHT })).toEqual(given);
    expect(validatePlan({ plan: '# Plan', allowedPrompts: [{ tool: 'Bash', prompt: 'run tests' }] })).toEqual(
      given,
    );
  });

  it("uses the turn's text when plan is missing, null or blank, before its thinking", () => {
    for (const input of [{}, { plan: '' }, { plan: '  \n' }, { plan: null }, undefined, null]) {
      expect(validatePlan(input, text(`\n${TURN}\n`))).toEqual({
        ok: true,
        value: { plan: TURN, source: 'text' },
      });
      expect(validatePlan(input, { text: TURN, thinking: THOUGHT })).toEqual({
        ok: true,
        value: { plan: TURN, source: 'text' },
      });
    }
    expect(validatePlan({ allowedPrompts: [{ tool: 'Bash', prompt: 'run tests' }] }, text(TURN))).toEqual({
      ok: true,
      value: { plan: TURN, source: 'text' },
    });
  });

  it("uses the turn's summarized thinking when it has no text (a 5.5 model's prose)", () => {
    for (const input of [{}, { plan: ' ' }, undefined]) {
      expect(validatePlan(input, { text: ' \n', thinking: `  ${THOUGHT}\n` })).toEqual({
        ok: true,
        value: { plan: THOUGHT, source: 'thinking' },
      });
    }
  });

  it('says to call again with the plan when neither is there', () => {
    for (const [input, prose] of [
      [{}, undefined],
      [{}, text('')],
      [{ plan: ' ' }, { text: '  \n ', thinking: ' ' }],
      [undefined, undefined],
    ] as const) {
      expect(validatePlan(input, prose)).toEqual({ ok: false, error: PLAN_MISSING });
    }
    expect(PLAN_MISSING).toMatch(/call ExitPlanMode again with the complete plan.*in the `plan` field/i);
  });

  it('still refuses a plan of the wrong type, a non-object input and a plan over the limit', () => {
    expect(validatePlan({ plan: 42 }, text(TURN))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^ExitPlanMode: invalid input\n {2}- plan: /),
    });
    expect(validatePlan('my plan', text(TURN))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^ExitPlanMode: invalid input\n {2}- \(input\): /),
    });
    expect(validatePlan({}, text('x'.repeat(MAX_PLAN_CHARS + 1)))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/- plan: .*<=100000/),
    });
    expect(validatePlan({}, { text: '', thinking: 'x'.repeat(MAX_PLAN_CHARS + 1) })).toMatchObject({
      ok: false,
    });
  });
});

describe('shortHeader', () => {
  it('cuts a header to 12 characters and an ellipsis, counting code points', () => {
    expect(shortHeader('Database')).toBe('Database');
    expect(shortHeader('x'.repeat(12))).toBe('x'.repeat(12));
    expect(shortHeader('Authentication method')).toBe('Authenticati…');
    expect(shortHeader('😀'.repeat(13))).toBe(`${'😀'.repeat(12)}…`);
  });
});
