import type { ApprovalStore } from '../store/store.js';

/**
 * True while a run has a question or a tool approval that nobody has resolved. Apart from the queue and the
 * run service, which both ask it, so neither imports the other for it.
 */
export async function waitsOnSomeone(store: ApprovalStore, runId: string): Promise<boolean> {
  const questions = await store.listQuestions({ runId, status: 'pending', limit: 1 });
  if (questions.length) return true;
  return (await store.listToolApprovals({ runId, status: 'pending', limit: 1 })).length > 0;
}
