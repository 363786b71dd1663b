import type { Clock } from '../clock.js';
import { DomainError } from '../domain/errors.js';
import { type AskUserQuestionInput, checkAnswers } from '../domain/questions.js';
import { selfApprovalBar } from '../domain/self-approval.js';
import { type Question, RUN_WAITS, type Run, type ToolApproval } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { ApprovalStore, PlanStore, RunStore } from '../store/store.js';
import type { RunEvents } from './events.js';
import type { RunQueue } from './queue.js';
import { waitsOnSomeone } from './waiting.js';

/** A refused answer to a question or decision on a tool approval; its code says why. */
export class QuestionError extends DomainError<
  'not_found' | 'not_pending' | 'invalid_answers' | 'self_approval'
> {}

/**
 * What people do to runs in progress: answer their questions, cancel them; and what time does to them:
 * questions that nobody answered in time. Each resumes or ends the run through the queue.
 */
export class RunService {
  constructor(
    private readonly deps: {
      store: ApprovalStore & PlanStore & RunStore;
      clock: Clock;
      logger: Logger;
      events: RunEvents;
      queue: RunQueue;
      /**
       * Called with a run this service canceled, once it has ended: an execute run's plan is settled by
       * whoever owns plans (the daemon wires the plan service here; runs do not know plans).
       */
      onCanceled: (run: Run) => Promise<unknown>;
    },
  ) {}

  /** What the run waits for (see `waitingOn`). */
  waitingOn(run: Run): Promise<WaitingOn | null> {
    return waitingOn(this.deps.store, run, this.deps.queue);
  }

  async answer(questionId: string, answers: unknown, by: string): Promise<Question> {
    const { store, clock, events } = this.deps;
    const q = await store.getQuestion(questionId);
    if (!q) throw new QuestionError('not_found', `question ${questionId} not found`);
    if (q.status !== 'pending')
      throw new QuestionError('not_pending', `question ${questionId} is ${q.status}`);
    const checked = checkAnswers(q.questions as AskUserQuestionInput, answers);
    if (!checked.ok) throw new QuestionError('invalid_answers', checked.error);
    if (!(await store.answerQuestion(q.id, checked.value, by, clock.now()))) {
      throw new QuestionError('not_pending', `question ${questionId} was resolved meanwhile`);
    }
    await events.emit(q.runId, 'question_resolved', {
      question_id: q.id,
      reason: 'answered',
      answers: checked.value,
      by,
    });
    await this.resume(q.runId);
    return (await store.getQuestion(q.id))!;
  }

  /** Questions past their deadline: the model is told that no answer came, and the run goes on. */
  async expireQuestions(now: number): Promise<number> {
    const { store, events } = this.deps;
    let n = 0;
    for (const q of await store.listExpiredQuestions(now, 100)) {
      if (!(await store.closeQuestion(q.id, 'timed_out', now))) continue;
      await events.emit(q.runId, 'question_resolved', {
        question_id: q.id,
        reason: 'timeout',
        answers: null,
      });
      await this.resume(q.runId);
      n += 1;
    }
    return n;
  }

  /**
   * A person allows or denies a parked tool call; the model reads a denial's message. Separation of duties
   * goes on into the execution: whoever requested the plan (or owns its session) may deny its calls but not
   * allow them, unless the plan allows self-approval.
   */
  async decideToolApproval(
    id: string,
    allow: boolean,
    message: string | null,
    by: string,
  ): Promise<ToolApproval> {
    const { store, clock, events } = this.deps;
    const a = await store.getToolApproval(id);
    if (!a) throw new QuestionError('not_found', `tool approval ${id} not found`);
    if (allow && a.status === 'pending' && a.planId) {
      const plan = await store.getPlan(a.planId);
      const bar = plan ? selfApprovalBar(plan, by) : null;
      if (bar) {
        const tie = bar === 'requester' ? 'requested this plan' : 'owns the session of this plan';
        throw new QuestionError(
          'self_approval',
          `${by} ${tie} and cannot allow its tool calls (allow_self_approval is off); denying is allowed`,
        );
      }
    }
    if (!(await store.resolveToolApproval(id, allow ? 'allowed' : 'denied', by, message, clock.now()))) {
      throw new QuestionError('not_pending', `tool approval ${id} is ${a.status}`);
    }
    await events.emit(a.runId, 'tool_approval_resolved', {
      tool_approval_id: id,
      decision: allow ? 'allowed' : 'denied',
      by,
      message,
    });
    await this.resume(a.runId);
    return (await store.getToolApproval(id))!;
  }

  /** Questions and tool approvals nobody answered in time (plans nobody decided: the plan service's sweep). */
  async expire(now: number): Promise<void> {
    const { store, events } = this.deps;
    await this.expireQuestions(now);
    for (const a of await store.listExpiredToolApprovals(now, 100)) {
      if (!(await store.resolveToolApproval(a.id, 'timed_out', null, null, now))) continue;
      await events.emit(a.runId, 'tool_approval_resolved', { tool_approval_id: a.id, decision: 'timed_out' });
      await this.resume(a.runId);
    }
  }

  async cancel(runId: string): Promise<boolean> {
    const { store, clock, events } = this.deps;
    // Whatever the run waits on is released first, so nobody answers a run that is gone.
    for (const q of await store.listQuestions({ runId, status: 'pending', limit: 10 })) {
      if (await store.closeQuestion(q.id, 'canceled', clock.now())) {
        await events.emit(runId, 'question_resolved', {
          question_id: q.id,
          reason: 'canceled',
          answers: null,
        });
      }
    }
    for (const a of await store.listToolApprovals({ runId, status: 'pending', limit: 10 })) {
      if (await store.resolveToolApproval(a.id, 'canceled', null, null, clock.now())) {
        await events.emit(runId, 'tool_approval_resolved', { tool_approval_id: a.id, decision: 'canceled' });
      }
    }
    const canceled = await this.deps.queue.cancel(runId);
    const run = canceled ? await store.getRun(runId) : null;
    if (run) await this.deps.onCanceled(run);
    return canceled;
  }

  /**
   * An admin says the account may be used again (its spend limit was raised, or access resumed), or that the
   * spend caps allow more today (a cap raised or removed): every run waiting on the spend limit or a spend
   * cap goes back to the queue, from its stored conversation (one still past its cap parks again before its
   * next request). The runs resumed.
   */
  async resumeSpendLimited(by: string): Promise<Run[]> {
    const { store, events, logger } = this.deps;
    const all: Run[] = [];
    for (const on of RUN_WAITS) {
      const resumed = await store.resumeWaitingRuns(on);
      for (const run of resumed) {
        await events.emit(run.id, on === 'spend_cap' ? 'spend_cap_resumed' : 'spend_limit_resumed', { by });
        this.deps.queue.submit(run);
      }
      if (resumed.length) logger.info({ runs: resumed.length, by, on }, `runs resumed after the ${on}`);
      all.push(...resumed);
    }
    return all;
  }

  /** Hands a parked run back to the queue once nothing it waits on is pending. */
  private async resume(runId: string): Promise<void> {
    const { store } = this.deps;
    if (await waitsOnSomeone(store, runId)) return;
    const run = await store.getRun(runId);
    if (run?.status === 'awaiting_input') this.deps.queue.submit(run);
  }
}

/** What a run that has not ended is waiting for, in words a person can act on; null when it is executing. */
export type WaitingOn =
  | { kind: 'question'; id: string; detail: string }
  | { kind: 'tool_approval'; id: string; detail: string }
  | { kind: 'spend_limit'; until: number; detail: string }
  | { kind: 'spend_cap'; until: number; detail: string }
  | { kind: 'session'; run_id: string; detail: string }
  | { kind: 'concurrency'; limit: number; detail: string }
  | { kind: 'queue'; detail: string };

export async function waitingOn(
  store: ApprovalStore & PlanStore & RunStore,
  run: Run,
  queue: { activeCount: number; maxConcurrent: number },
): Promise<WaitingOn | null> {
  if (run.status === 'awaiting_input' && run.waitingOn?.on === 'spend_cap') {
    return {
      kind: 'spend_cap',
      until: run.waitingOn.until,
      detail: `a spend cap's daily_usd (docs/spend-caps.md): it goes on when the day resets at ${new Date(run.waitingOn.until).toISOString()}, or when an admin resumes it with drydock runs resume (or POST /v1/runs/resume) after raising the cap`,
    };
  }
  if (run.status === 'awaiting_input' && run.waitingOn) {
    return {
      kind: 'spend_limit',
      until: run.waitingOn.until,
      detail: `the account's spend limit: an admin resumes it with drydock runs resume (or POST /v1/runs/resume) once the limit is raised; else it tries again at ${new Date(run.waitingOn.until).toISOString()}`,
    };
  }
  if (run.status === 'awaiting_input') {
    const [q] = await store.listQuestions({ runId: run.id, status: 'pending', limit: 1 });
    if (q) {
      return {
        kind: 'question',
        id: q.id,
        detail: `a question for a person: answer it with drydock questions answer ${q.id} (or POST /v1/questions/${q.id}/answers)`,
      };
    }
    const [a] = await store.listToolApprovals({ runId: run.id, status: 'pending', limit: 1 });
    if (a) {
      return {
        kind: 'tool_approval',
        id: a.id,
        detail: `a person to allow or deny its ${a.tool} call: drydock tool-approvals decide ${a.id} --allow|--deny (or POST /v1/tool-approvals/${a.id})`,
      };
    }
    return null;
  }
  if (run.status !== 'queued') return null;
  // A session runs one run at a time: an active run ahead of this one holds it.
  for (const status of ['running', 'awaiting_input', 'queued'] as const) {
    const page = await store.listRuns({ sessionId: run.sessionId, status, limit: 50 });
    // Queued runs of a session go in order of creation (ties as a restarted queue orders them: by id).
    const before = (r: Run) =>
      r.createdAt < run.createdAt || (r.createdAt === run.createdAt && r.id < run.id);
    const ahead = page.items.find((r) => r.id !== run.id && (status !== 'queued' || before(r)));
    if (ahead) {
      return {
        kind: 'session',
        run_id: ahead.id,
        detail: `its session is busy with run ${ahead.id} (${ahead.status}); a session runs one run at a time`,
      };
    }
  }
  if (queue.activeCount >= queue.maxConcurrent) {
    return {
      kind: 'concurrency',
      limit: queue.maxConcurrent,
      detail: `${queue.activeCount} runs are executing, the limit (runs.max_concurrent) is ${queue.maxConcurrent}`,
    };
  }
  return { kind: 'queue', detail: 'its turn in the queue: it starts in a moment' };
}
