import { z } from 'zod';
import { isPlainObject, type Parsed } from '../../domain/input.js';
import {
  type AskUserQuestionInput,
  askUserQuestionInput,
  MAX_OPTIONS,
  MAX_QUESTIONS,
  MIN_OPTIONS,
} from '../../domain/questions.js';
import { toolDefinition } from './define.js';
import { parseInput } from './input.js';
import { NO_PROSE, type TurnProse } from './turn-prose.js';

export { MAX_HEADER_CHARS, shortHeader } from '../../domain/questions.js';

// The two plan-phase tools that do not touch the workspace: AskUserQuestion parks the run until a person
// answers, ExitPlanMode hands in the plan. The agent loop acts on them; this module owns their tool
// definitions and the plan's contract. What a question is and how answers are checked is the domain's
// (src/domain/questions.ts): the run service checks answers too.

export const MAX_PLAN_CHARS = 100_000;

export const exitPlanModeInput = z.object({
  plan: z
    .string()
    .min(1)
    .max(MAX_PLAN_CHARS)
    .refine((p) => p.trim() !== '', 'plan is blank'),
});
export type ExitPlanModeInput = z.infer<typeof exitPlanModeInput>;

export const askUserQuestionTool = toolDefinition({
  name: 'AskUserQuestion',
  description: [
    'Asks the person who requested this work 1-4 multiple-choice questions and waits for the answers.',
    'Use it when a decision depends on their preference or on facts you cannot find in the workspace; do not guess.',
    'Each question has a short header (at most 12 characters) and 2-4 options, each a label with a description',
    'and optionally a preview (a mockup or code snippet shown beside it).',
    'Set multiSelect to true when several options may be chosen together.',
    'The person may also answer in their own words instead of (or, for multiSelect, besides) the options.',
  ],
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
          multiSelect: {
            type: 'boolean',
            description: 'Whether several options may be chosen. Defaults to false.',
          },
        },
        required: ['question', 'header', 'options'],
        additionalProperties: false,
      },
    },
  },
  required: ['questions'],
});

export const exitPlanModeTool = toolDefinition({
  name: 'ExitPlanMode',
  description: [
    'Hands in your finished plan, in markdown, for a human to review.',
    'Call it once you have read enough to propose concrete, ordered steps; nothing is changed until the plan is approved.',
    'Put the complete plan in `plan`.',
  ],
  properties: {
    plan: { type: 'string', description: 'The complete plan, in markdown.' },
  },
  required: ['plan'],
});

/** Validates an AskUserQuestion input; the error tells the model what to fix. */
export function validateQuestions(input: unknown): Parsed<AskUserQuestionInput> {
  return parseInput('AskUserQuestion', askUserQuestionInput, input);
}

export const PLAN_MISSING =
  'ExitPlanMode: the plan is missing. Call ExitPlanMode again with the complete plan, in markdown, in the `plan` field (a string).';

/** Where a proposed plan's text came from: the call's `plan`, or the turn's text or summarized thinking. */
export type PlanSource = 'input' | 'text' | 'thinking';

export interface ProposedPlan {
  plan: string;
  source: PlanSource;
}

/**
 * Validates an ExitPlanMode input. A model trained on Claude Code may call ExitPlanMode without `plan` (its
 * newer ExitPlanMode reads the plan from a file it wrote) after writing the plan out in the same turn: when
 * `plan` is missing, null or blank, the turn's text is the plan if it is not blank, else the turn's summarized
 * thinking (a 5.5 model's prose between tool calls arrives as thinking blocks). `source` says which. Without
 * any, the error tells the model to call again with the plan. Extra fields (e.g. `allowedPrompts`) are
 * ignored. A `plan` of the wrong type is still refused.
 */
export function validatePlan(input: unknown, prose: TurnProse = NO_PROSE): Parsed<ProposedPlan> {
  const given = isPlainObject(input) ? input.plan : undefined;
  const missing =
    (input === undefined || input === null || isPlainObject(input)) &&
    (given === undefined || given === null || (typeof given === 'string' && given.trim() === ''));
  let source: PlanSource = 'input';
  if (missing) {
    const text = prose.text.trim();
    const thinking = prose.thinking.trim();
    if (text === '' && thinking === '') return { ok: false, error: PLAN_MISSING };
    source = text !== '' ? 'text' : 'thinking';
    input = { plan: text !== '' ? text : thinking };
  }
  const parsed = parseInput('ExitPlanMode', exitPlanModeInput, input);
  return parsed.ok ? { ok: true, value: { plan: parsed.value.plan, source } } : parsed;
}
