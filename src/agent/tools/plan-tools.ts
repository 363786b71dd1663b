import { z } from 'zod';
import { describeIssues, type Parsed } from './input.js';
import type { ToolDefinition } from './types.js';

// The two plan-phase tools that do not touch the workspace: AskUserQuestion parks the run until a person
// answers, ExitPlanMode hands in the plan. The agent loop acts on them; this module owns their contracts.

export const MAX_QUESTIONS = 4;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 4;
export const MAX_HEADER_CHARS = 12;
export const MAX_PLAN_CHARS = 100_000;

const option = z
  .object({
    label: z.string().trim().min(1).max(200),
    description: z.string().max(2_000),
  })
  .strict();

const question = z
  .object({
    question: z.string().trim().min(1).max(2_000),
    header: z.string().trim().min(1).max(MAX_HEADER_CHARS),
    options: z.array(option).min(MIN_OPTIONS).max(MAX_OPTIONS),
    multiSelect: z.boolean(),
  })
  .strict()
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
  .strict()
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

export const exitPlanModeInput = z.object({ plan: z.string().min(1).max(MAX_PLAN_CHARS) }).strict();
export type ExitPlanModeInput = z.infer<typeof exitPlanModeInput>;

export const askUserQuestionTool: ToolDefinition = {
  name: 'AskUserQuestion',
  description: [
    'Asks the person who requested this work 1-4 multiple-choice questions and waits for the answers.',
    'Use it when a decision depends on their preference or on facts you cannot find in the workspace; do not guess.',
    'Each question has a short header (at most 12 characters) and 2-4 options, each a label with a description.',
    'Set multiSelect to true when several options may be chosen together.',
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
              maxLength: MAX_HEADER_CHARS,
              description: 'A very short label for the question, shown as a tag (at most 12 characters).',
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
  ].join(' '),
  input_schema: {
    type: 'object',
    properties: {
      plan: { type: 'string', description: 'The plan, in markdown.' },
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

/** Validates an ExitPlanMode input. */
export function validatePlan(input: unknown): Parsed<ExitPlanModeInput> {
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
 * Checks answers to asked questions, keyed by question text: every question answered, with one of its
 * option labels (a non-empty array of distinct labels when it is multiSelect), and no other keys.
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
    if (q.multiSelect) {
      if (!Array.isArray(answer) || answer.length === 0) {
        return {
          ok: false,
          error: `question ${name} takes a non-empty array of labels (choose from ${choices})`,
        };
      }
      const picked = new Set<string>();
      for (const a of answer) {
        if (typeof a !== 'string' || !labels.has(a)) {
          return {
            ok: false,
            error: `${JSON.stringify(a)} is not an option of question ${name} (choose from ${choices})`,
          };
        }
        if (picked.has(a))
          return { ok: false, error: `${JSON.stringify(a)} is chosen twice for question ${name}` };
        picked.add(a);
      }
      entries.push([q.question, [...answer] as string[]]);
    } else {
      if (typeof answer !== 'string') {
        return { ok: false, error: `question ${name} takes one label as a string (choose from ${choices})` };
      }
      if (!labels.has(answer)) {
        return {
          ok: false,
          error: `${JSON.stringify(answer)} is not an option of question ${name} (choose from ${choices})`,
        };
      }
      entries.push([q.question, answer]);
    }
  }
  // fromEntries defines own properties, so a question text such as "__proto__" cannot reach the prototype.
  return { ok: true, value: Object.fromEntries(entries) };
}
