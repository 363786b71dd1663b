import { z } from 'zod';
import { describeIssues, type Parsed } from './input.js';
import type { ToolDefinition } from './types.js';

export { MAX_HEADER_CHARS, shortHeader } from '../../domain/questions.js';

// The two plan-phase tools that do not touch the workspace: AskUserQuestion parks the run until a person
// answers, ExitPlanMode hands in the plan. The agent loop acts on them; this module owns their contracts.

export const MAX_QUESTIONS = 4;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 4;
/** The most a header may have at all: a model trained on a 12-character tag sometimes writes a phrase. */
export const MAX_STORED_HEADER_CHARS = 200;
export const MAX_PREVIEW_CHARS = 10_000;
/** The most characters of a person's own answer ("Other") to one question. */
export const MAX_FREE_TEXT_CHARS = 2_000;
export const MAX_PLAN_CHARS = 100_000;

// Unknown keys are stripped, not refused: Claude Code's tools take fields drydock does not use (an
// AskUserQuestion `answers` or `metadata`, an ExitPlanMode `allowedPrompts`), and a model trained on them
// should not have its call refused for sending them. Known fields of the wrong type are still refused.

const option = z.object({
  label: z.string().trim().min(1).max(200),
  description: z.string().max(2_000),
  /** Claude Code's option preview (a mockup or code snippet); shown beside the option. */
  preview: z.string().max(MAX_PREVIEW_CHARS).optional(),
});

const question = z
  .object({
    question: z.string().trim().min(1).max(2_000),
    header: z.string().trim().min(1).max(MAX_STORED_HEADER_CHARS),
    options: z.array(option).min(MIN_OPTIONS).max(MAX_OPTIONS),
    multiSelect: z.boolean(),
  })
  .superRefine((q, ctx) => {
    const seen = new Set<string>();
    q.options.forEach((o, i) => {
      if (seen.has(o.label)) {
        ctx.addIssue({
          code: 'custom',
          path: ['options', i, 'label'],
          message: `duplicate option label "${o.label}"`,
        });
      }
      seen.add(o.label);
    });
  });

export const askUserQuestionInput = z
  .object({ questions: z.array(question).min(1).max(MAX_QUESTIONS) })
  .superRefine((input, ctx) => {
    // Answers come back keyed by question text, so the texts must tell the questions apart.
    const seen = new Set<string>();
    input.questions.forEach((q, i) => {
      if (seen.has(q.question)) {
        ctx.addIssue({
          code: 'custom',
          path: ['questions', i, 'question'],
          message: 'duplicate question text',
        });
      }
      seen.add(q.question);
    });
  });
export type AskUserQuestionInput = z.infer<typeof askUserQuestionInput>;
export type AskedQuestion = AskUserQuestionInput['questions'][number];

export const exitPlanModeInput = z.object({
  plan: z
    .string()
    .min(1)
    .max(MAX_PLAN_CHARS)
    .refine((p) => p.trim() !== '', 'plan is blank'),
});
export type ExitPlanModeInput = z.infer<typeof exitPlanModeInput>;

export const askUserQuestionTool: ToolDefinition = {
  name: 'AskUserQuestion',
  description: [
    'Asks the person who requested this work 1-4 multiple-choice questions and waits for the answers.',
    'Use it when a decision depends on their preference or on facts you cannot find in the workspace; do not guess.',
    'Each question has a short header (at most 12 characters) and 2-4 options, each a label with a description',
    'and optionally a preview (a mockup or code snippet shown beside it).',
    'Set multiSelect to true when several options may be chosen together.',
    'The person may also answer in their own words instead of (or, for multiSelect, besides) the options.',
  ].join(' '),
  input_schema: {
    type: 'object',
    properties: {
      questions: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_QUESTIONS,
        description: 'The questions to ask (1-4).',
        items: {
          type: 'object',
          properties: {
            question: { type: 'string', description: 'The full question, ending with a question mark.' },
            header: {
              type: 'string',
              description:
                'A very short label for the question, shown as a tag (at most 12 characters; a longer one is cut when shown).',
            },
            options: {
              type: 'array',
              minItems: MIN_OPTIONS,
              maxItems: MAX_OPTIONS,
              description: 'The choices (2-4).',
              items: {
                type: 'object',
                properties: {
                  label: { type: 'string', description: 'The choice as shown, a few words.' },
                  description: { type: 'string', description: 'What choosing it means.' },
                  preview: {
                    type: 'string',
                    description:
                      'Optional: a short mockup, code snippet or example shown beside this option, to compare the choices.',
                  },
                },
                required: ['label', 'description'],
                additionalProperties: false,
              },
            },
            multiSelect: { type: 'boolean', description: 'Whether several options may be chosen.' },
          },
          required: ['question', 'header', 'options', 'multiSelect'],
          additionalProperties: false,
        },
      },
    },
    required: ['questions'],
    additionalProperties: false,
  },
};

export const exitPlanModeTool: ToolDefinition = {
  name: 'ExitPlanMode',
  description: [
    'Hands in your finished plan, in markdown, for a human to review.',
    'Call it once you have read enough to propose concrete, ordered steps; nothing is changed until the plan is approved.',
    'Put the complete plan in `plan`.',
  ].join(' '),
  input_schema: {
    type: 'object',
    properties: {
      plan: { type: 'string', description: 'The complete plan, in markdown.' },
    },
    required: ['plan'],
    additionalProperties: false,
  },
};

/** Validates an AskUserQuestion input; the error tells the model what to fix. */
export function validateQuestions(input: unknown): Parsed<AskUserQuestionInput> {
  const result = askUserQuestionInput.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: describeIssues('AskUserQuestion', result.error) };
}

export const PLAN_MISSING =
  'ExitPlanMode: the plan is missing. Call ExitPlanMode again with the complete plan, in markdown, in the `plan` field (a string).';

/**
 * Validates an ExitPlanMode input. A model trained on Claude Code may call ExitPlanMode without `plan` (its
 * newer ExitPlanMode reads the plan from a file) after writing the plan as text in the same turn: when
 * `plan` is missing, null or blank, `turnText` (the assistant's text of that turn, as the loop passes it) is
 * the plan, if it is not blank. Without either, the error tells the model to call again with the plan.
 * Extra fields (e.g. `allowedPrompts`) are ignored. A `plan` of the wrong type is still refused.
 */
export function validatePlan(input: unknown, turnText?: string): Parsed<ExitPlanModeInput> {
  const given = isPlainObject(input) ? input.plan : undefined;
  const missing =
    (input === undefined || input === null || isPlainObject(input)) &&
    (given === undefined || given === null || (typeof given === 'string' && given.trim() === ''));
  if (missing) {
    const text = typeof turnText === 'string' ? turnText.trim() : '';
    if (text === '') return { ok: false, error: PLAN_MISSING };
    input = { plan: text };
  }
  const result = exitPlanModeInput.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: describeIssues('ExitPlanMode', result.error) };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks answers to asked questions, keyed by question text: every question answered and no other keys.
 * A single-choice answer is one string: an option label, or the person's own text ("Other"). A multiSelect
 * answer is a non-empty array of distinct strings: option labels and at most one text of their own.
 * Surrounding whitespace is dropped; a blank answer is refused. The model reads the answers as given.
 */
export function checkAnswers(
  questions: AskUserQuestionInput,
  answers: unknown,
): Parsed<Record<string, string | string[]>> {
  if (!isPlainObject(answers))
    return { ok: false, error: 'answers must be an object keyed by question text' };
  const byText = new Map(questions.questions.map((q) => [q.question, q]));
  for (const key of Object.keys(answers)) {
    if (!byText.has(key)) return { ok: false, error: `unknown question ${JSON.stringify(key)}` };
  }

  const entries: [string, string | string[]][] = [];
  for (const q of questions.questions) {
    const name = JSON.stringify(q.question);
    if (!Object.hasOwn(answers, q.question)) return { ok: false, error: `question ${name} is not answered` };
    const answer = answers[q.question];
    const labels = new Set(q.options.map((o) => o.label));
    const choices = q.options.map((o) => JSON.stringify(o.label)).join(', ');
    /** One answer, trimmed; an error when it is not a non-blank string of bounded length. */
    const one = (a: unknown): Parsed<string> => {
      if (typeof a !== 'string') {
        return {
          ok: false,
          error: `${JSON.stringify(a) ?? String(a)} is not a valid answer to question ${name}: give an option label (${choices}) or your own text`,
        };
      }
      const text = a.trim();
      if (text === '') {
        return {
          ok: false,
          error: `question ${name} has a blank answer: give an option label (${choices}) or your own text`,
        };
      }
      if (!labels.has(text) && text.length > MAX_FREE_TEXT_CHARS) {
        return {
          ok: false,
          error: `the answer to question ${name} is longer than ${MAX_FREE_TEXT_CHARS} characters`,
        };
      }
      return { ok: true, value: text };
    };
    if (q.multiSelect) {
      if (!Array.isArray(answer) || answer.length === 0) {
        return {
          ok: false,
          error: `question ${name} takes a non-empty array of answers (option labels from ${choices}, and at most one text of your own)`,
        };
      }
      const picked: string[] = [];
      let ownText: string | undefined;
      for (const a of answer) {
        const checked = one(a);
        if (!checked.ok) return checked;
        const text = checked.value;
        if (picked.includes(text))
          return { ok: false, error: `${JSON.stringify(text)} is chosen twice for question ${name}` };
        if (!labels.has(text)) {
          if (ownText !== undefined) {
            return {
              ok: false,
              error: `question ${name} takes at most one answer of your own besides its options (${choices}); got ${JSON.stringify(ownText)} and ${JSON.stringify(text)}`,
            };
          }
          ownText = text;
        }
        picked.push(text);
      }
      entries.push([q.question, picked]);
    } else {
      if (Array.isArray(answer)) {
        return {
          ok: false,
          error: `question ${name} takes one answer as a string: an option label (${choices}) or your own text`,
        };
      }
      const checked = one(answer);
      if (!checked.ok) return checked;
      entries.push([q.question, checked.value]);
    }
  }
  // fromEntries defines own properties, so a question text such as "__proto__" cannot reach the prototype.
  return { ok: true, value: Object.fromEntries(entries) };
}
