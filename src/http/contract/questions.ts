import { z } from 'zod';
import { limit, listOf, time } from './common.js';

// /v1/questions: what a plan run asked people (AskUserQuestion), and their answers.

export const QUESTION_STATUSES = ['pending', 'answered', 'timed_out', 'canceled'] as const;

export const questionListQuery = z.strictObject({
  status: z.enum(QUESTION_STATUSES).optional(),
  run_id: z.string().max(100).optional(),
  limit,
});

export const answerBody = z.strictObject({
  answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
});

/** One question as the model asked it (its AskUserQuestion input, unknown keys dropped). */
export const askedQuestionSchema = z.strictObject({
  question: z.string(),
  header: z.string(),
  options: z.array(
    z.strictObject({ label: z.string(), description: z.string(), preview: z.string().optional() }),
  ),
  multiSelect: z.boolean(),
});

export const questionSchema = z.strictObject({
  id: z.string(),
  run_id: z.string(),
  session_id: z.string(),
  status: z.enum(QUESTION_STATUSES),
  questions: z.array(askedQuestionSchema),
  answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).nullable(),
  answered_by: z.string().nullable(),
  created_at: time,
  expires_at: time,
  resolved_at: time.nullable(),
});
export type QuestionJson = z.infer<typeof questionSchema>;

export const questionListSchema = listOf(questionSchema);
