import { z } from 'zod';
import { isPlainObject, type Parsed } from './input.js';

// A question a run asks a person (AskUserQuestion): its shape, its limits and the check of the answers.
// The agent's tool validates what the model asks against it; the run service checks answers with it.

export const MAX_QUESTIONS = 4;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 4;
/** Headers are shown cut to this many characters (see `shortHeader`); longer ones are accepted and stored whole. */
export const MAX_HEADER_CHARS = 12;
/** The most a header may have at all: a model trained on a 12-character tag sometimes writes a phrase. */
export const MAX_STORED_HEADER_CHARS = 200;
export const MAX_PREVIEW_CHARS = 10_000;
/** The most characters of a person's own answer ("Other") to one question. */
export const MAX_FREE_TEXT_CHARS = 2_000;

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
    // Optional, false when left out, as in Claude Code's AskUserQuestion (its input schema defaults
    // multiSelect to false; Agent SDK "Handle approvals and user input", platform.claude.com/docs/en/agent-sdk/user-input).
    // The stored question always has it, so answers are checked against what was meant.
    multiSelect: z.boolean().default(false),
  })
  .superRefine((q, ctx) =>
    refuseRepeats(
      ctx,
      q.options,
      (o) => o.label,
      ['options', 'label'],
      (o) => `duplicate option label "${o.label}"`,
    ),
  );

export const askUserQuestionInput = z
  .object({ questions: z.array(question).min(1).max(MAX_QUESTIONS) })
  // Answers come back keyed by question text, so the texts must tell the questions apart.
  .superRefine((input, ctx) =>
    refuseRepeats(
      ctx,
      input.questions,
      (q) => q.question,
      ['questions', 'question'],
      () => 'duplicate question text',
    ),
  );
/** An issue at each item whose key an earlier item has already: at `[list, index, field]`. */
function refuseRepeats<T>(
  ctx: z.RefinementCtx,
  items: readonly T[],
  key: (item: T) => string,
  [list, field]: [string, string],
  message: (item: T) => string,
): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(key(item))) ctx.addIssue({ code: 'custom', path: [list, i, field], message: message(item) });
    seen.add(key(item));
  });
}

export type AskUserQuestionInput = z.output<typeof askUserQuestionInput>;
export type AskedQuestion = AskUserQuestionInput['questions'][number];

/**
 * A header as shown to people (question pages, the CLI): at most MAX_HEADER_CHARS characters, then "…".
 * Counts code points, so an emoji is never cut in half.
 */
export function shortHeader(header: string): string {
  const chars = Array.from(header.trim());
  return chars.length > MAX_HEADER_CHARS ? `${chars.slice(0, MAX_HEADER_CHARS).join('')}…` : chars.join('');
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
    if (!Object.hasOwn(answers, q.question)) {
      return { ok: false, error: `question ${JSON.stringify(q.question)} is not answered` };
    }
    const asked = askedOf(q);
    const checked = q.multiSelect
      ? checkMany(asked, answers[q.question])
      : checkSingle(asked, answers[q.question]);
    if (!checked.ok) return checked;
    entries.push([q.question, checked.value]);
  }
  // fromEntries defines own properties, so a question text such as "__proto__" cannot reach the prototype.
  return { ok: true, value: Object.fromEntries(entries) };
}

/** One question as its answers are checked: its name (quoted), its option labels, and them listed. */
interface Asked {
  name: string;
  labels: Set<string>;
  choices: string;
}

function askedOf(q: AskUserQuestionInput['questions'][number]): Asked {
  return {
    name: JSON.stringify(q.question),
    labels: new Set(q.options.map((o) => o.label)),
    choices: q.options.map((o) => JSON.stringify(o.label)).join(', '),
  };
}

/** One answer, trimmed; an error when it is not a non-blank string of bounded length. */
function checkOne({ name, labels, choices }: Asked, a: unknown): Parsed<string> {
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
}

/** The answer to a single-choice question: one string. */
function checkSingle(asked: Asked, answer: unknown): Parsed<string> {
  if (Array.isArray(answer)) {
    return {
      ok: false,
      error: `question ${asked.name} takes one answer as a string: an option label (${asked.choices}) or your own text`,
    };
  }
  return checkOne(asked, answer);
}

/** The answer to a multiSelect question: distinct strings, options and at most one text of the person's own. */
function checkMany(asked: Asked, answer: unknown): Parsed<string[]> {
  const { name, labels, choices } = asked;
  if (!Array.isArray(answer) || answer.length === 0) {
    return {
      ok: false,
      error: `question ${name} takes a non-empty array of answers (option labels from ${choices}, and at most one text of your own)`,
    };
  }
  const picked: string[] = [];
  let ownText: string | undefined;
  for (const a of answer) {
    const checked = checkOne(asked, a);
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
  return { ok: true, value: picked };
}
