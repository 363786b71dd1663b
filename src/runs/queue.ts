import type { Clock } from '../clock.js';
import { isFailedRunStatus, isFinishedRunStatus, type Run, type RunStatus } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { ApprovalStore, RunStore } from '../store/store.js';
import { RUN_FINISHED, type RunEvents } from './events.js';
import { waitsOnSomeone } from './waiting.js';

export interface RunOutcome {
  status: Exclude<RunStatus, 'queued' | 'running'>;
  error?: string | null;
}

/** Carries out one run. The agent comes in through this interface; the queue owns ordering and limits. */
export interface RunExecutor {
  execute(run: Run, signal: AbortSignal): Promise<RunOutcome>;
}

/** Why a run's signal was aborted: a person canceled it, or the daemon is stopping. */
export class RunAborted extends Error {
  constructor(readonly kind: 'cancel' | 'shutdown') {
    super(kind === 'cancel' ? 'canceled' : 'the daemon stopped while this run was in progress');
  }
}

export interface RunQueueOptions {
  store: ApprovalStore & RunStore;
  clock: Clock;
  logger: Logger;
  events: RunEvents;
  executor: RunExecutor;
  maxConcurrent: number;
  /** Called after each run settles or parks (the scheduler uses it to fire slots that waited). */
  onSettled?: (run: Run) => void;
}

/** What the queue keeps of a waiting run. */
type Queued = Pick<Run, 'id' | 'sessionId' | 'status'>;

/**
 * Hands runs to the executor: at most `maxConcurrent` executing at once, one run at a time per session
 * (a run parked on a question still holds its session), and fair across sessions: round robin over the
 * sessions that have work, so one busy session cannot starve the others.
 */
export class RunQueue {
  /**
   * Session id -> its runs, oldest first, in two lines that make the round robin: sessions this process has
   * not served yet, in order of arrival, go first; then the others, a session joining the back of that line
   * when it is served with work left, or when work comes for it again. The first free session is served
   * next, so a pass only looks past the sessions that are busy.
   */
  private readonly fresh = new Map<string, Queued[]>();
  private readonly rotation = new Map<string, Queued[]>();
  private readonly served = new Set<string>();
  private readonly active = new Map<string, { run: Queued; abort: AbortController; done: Promise<void> }>();
  private readonly busySessions = new Set<string>();
  /** Sessions whose run waits for a person (a question); value: that run's id. */
  private readonly parked = new Map<string, string>();
  private readonly resumeSoon = new Set<string>();
  private accepting = true;

  constructor(private readonly opts: RunQueueOptions) {}

  get activeCount(): number {
    return this.active.size;
  }

  get maxConcurrent(): number {
    return this.opts.maxConcurrent;
  }

  /** Queues a run: a new one (status queued) or a parked one to resume (status awaiting_input). */
  submit(run: Queued): void {
    if (!this.accepting) return; // stays in the store; recover() picks it up on the next start
    if (this.parked.get(run.sessionId) === run.id) this.parked.delete(run.sessionId);
    const line = this.served.has(run.sessionId) ? this.rotation : this.fresh;
    const list = line.get(run.sessionId) ?? [];
    if (list.some((r) => r.id === run.id) || this.active.has(run.id)) return;
    // Only what ordering needs is kept (not the prompt): the run is read again when it starts.
    const queued: Queued = { id: run.id, sessionId: run.sessionId, status: run.status };
    // A resumed run goes first in its session: it already holds the session.
    if (run.status === 'awaiting_input') list.unshift(queued);
    else list.push(queued);
    line.set(run.sessionId, list);
    this.pump();
  }

  /**
   * On start. Runs left `running` by a process that died are retried once from their stored conversation
   * (then marked interrupted); parked runs hold their sessions again; queued runs are picked up.
   */
  async recover(): Promise<{ requeued: number; retried: number; interrupted: number; parked: number }> {
    const { store, clock, events } = this.opts;
    const tally = { requeued: 0, retried: 0, interrupted: 0, parked: 0 };
    for (const status of ['running', 'awaiting_input', 'queued'] as const) {
      for (const run of await this.all(status)) {
        if (status === 'running') {
          // Status and attempt change in one statement: a crash in between must not grant another retry.
          if (
            run.attempt < 2 &&
            (await store.transitionRun(run.id, ['running'], 'queued', { attempt: run.attempt + 1 }))
          ) {
            await events.emit(run.id, 'run_interrupted', { retrying: true, attempt: run.attempt });
            tally.retried += 1;
            this.submit({ ...run, status: 'queued' });
          } else if (
            await store.transitionRun(run.id, ['running'], 'interrupted', {
              finishedAt: clock.now(),
              error: 'the daemon stopped while this run was in progress (already retried once)',
            })
          ) {
            tally.interrupted += 1;
            await this.finished(run.id);
          }
        } else if (status === 'awaiting_input') {
          await this.park(run);
          tally.parked += 1;
        } else {
          this.submit(run);
          tally.requeued += 1;
        }
      }
    }
    return tally;
  }

  private async all(status: RunStatus): Promise<Run[]> {
    const runs: Run[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.opts.store.listRuns({ status, limit: 200, cursor });
      runs.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return runs.reverse(); // oldest first
  }

  /** Stops taking work; waits up to `graceMs` for executing runs, then aborts them (they end interrupted). */
  /** Starts nothing more: runs submitted from now on stay queued in the store for recover(). */
  pause(): void {
    this.accepting = false;
    this.fresh.clear();
    this.rotation.clear();
  }

  async drain(graceMs: number): Promise<void> {
    this.pause();
    const all = () => Promise.all([...this.active.values()].map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all().then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      for (const a of this.active.values()) a.abort.abort(new RunAborted('shutdown'));
      await all();
    }
  }

  /**
   * Cancels a run wherever it is: executing (its model stream is aborted), waiting in the queue, or
   * parked on a question. Returns false when the run had already ended.
   */
  async cancel(runId: string): Promise<boolean> {
    const { store, clock } = this.opts;
    const executing = this.active.get(runId);
    if (executing) {
      executing.abort.abort(new RunAborted('cancel'));
      await executing.done;
      return true;
    }
    for (const line of [this.fresh, this.rotation]) {
      for (const [sessionId, list] of line) {
        const i = list.findIndex((r) => r.id === runId);
        if (i >= 0) list.splice(i, 1);
        if (!list.length) line.delete(sessionId);
      }
    }
    const ok = await store.transitionRun(runId, ['queued', 'awaiting_input'], 'canceled', {
      finishedAt: clock.now(),
      error: 'canceled',
    });
    if (!ok) return false;
    for (const [sessionId, parkedRun] of this.parked) if (parkedRun === runId) this.parked.delete(sessionId);
    await this.finished(runId);
    this.pump();
    return true;
  }

  private pump(): void {
    while (this.accepting && this.active.size < this.opts.maxConcurrent) {
      const next = this.nextSession();
      if (!next) return;
      const [sessionId, list] = next;
      const run = list.shift()!;
      // Served: to the back of the rotation, behind every session that waited.
      this.fresh.delete(sessionId);
      this.rotation.delete(sessionId);
      this.served.add(sessionId);
      if (list.length) this.rotation.set(sessionId, list);
      this.start(run);
    }
  }

  /**
   * Round robin: the first session in line that has work and is free (not executing, not parked on a
   * question): never served ones first, then the one served longest ago, so one busy session cannot starve
   * the others.
   */
  private nextSession(): [string, Queued[]] | undefined {
    for (const line of [this.fresh, this.rotation]) {
      for (const [sessionId, list] of line) {
        if (!list.length || this.busySessions.has(sessionId)) continue;
        const parkedRun = this.parked.get(sessionId);
        if (parkedRun && list[0]!.id !== parkedRun) continue;
        return [sessionId, list];
      }
    }
    return undefined;
  }

  private start(run: Queued): void {
    const abort = new AbortController();
    this.busySessions.add(run.sessionId);
    const done = this.execute(run, abort)
      .catch((err) => this.opts.logger.error({ err, run_id: run.id }, 'run bookkeeping failed'))
      .finally(() => {
        this.active.delete(run.id);
        this.busySessions.delete(run.sessionId);
        if (this.resumeSoon.delete(run.id)) this.submit({ ...run, status: 'awaiting_input' });
        this.pump();
      });
    this.active.set(run.id, { run, abort, done });
  }

  private async execute(run: Queued, abort: AbortController): Promise<void> {
    const { store, clock, logger } = this.opts;
    const from = run.status === 'awaiting_input' ? 'awaiting_input' : 'queued';
    const claimed = await store.transitionRun(run.id, [from], 'running', { startedAt: clock.now() });
    if (!claimed) return; // canceled meanwhile, or another process took it
    const fresh = await store.getRun(run.id);
    if (!fresh) return;
    let outcome: RunOutcome;
    const began = clock.now();
    try {
      outcome = await this.opts.executor.execute(fresh, abort.signal);
    } catch (err) {
      const reason = abort.signal.aborted ? abort.signal.reason : null;
      outcome =
        reason instanceof RunAborted
          ? { status: reason.kind === 'cancel' ? 'canceled' : 'interrupted', error: reason.message }
          : { status: 'failed', error: describe(err) };
    }
    const terminal = isFinishedRunStatus(outcome.status);
    const ended = clock.now();
    await store.transitionRun(run.id, ['running'], outcome.status, {
      activeMs: ended - began,
      ...(terminal ? { finishedAt: ended } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
    });
    if (outcome.status === 'awaiting_input') {
      await this.park(run);
    } else {
      await this.finished(run.id);
      const fields = { run_id: run.id, session_id: run.sessionId, status: outcome.status };
      // A run that did not end as meant is worth a look: warn, with the reason.
      if (!isFailedRunStatus(outcome.status)) {
        logger.info(fields, 'run finished');
      } else {
        logger.warn({ ...fields, reason: outcome.error ?? null }, 'run finished without success');
      }
    }
    const settled = await store.getRun(run.id);
    if (settled) this.opts.onSettled?.(settled);
  }

  /**
   * The run waits for a person and keeps its session. An answer that arrived while the run was still
   * executing found it not yet parked: resume at once in that case.
   */
  private async park(run: Queued): Promise<void> {
    this.parked.set(run.sessionId, run.id);
    if (await waitsOnSomeone(this.opts.store, run.id)) return;
    // Still executing: resubmit once its slot is released (see start()).
    if (this.active.has(run.id)) this.resumeSoon.add(run.id);
    else this.submit({ ...run, status: 'awaiting_input' });
  }

  /** The receipt that ends every run's event log. */
  private async finished(runId: string): Promise<void> {
    const run = await this.opts.store.getRun(runId);
    if (!run) return;
    await this.opts.events.emit(runId, RUN_FINISHED, {
      status: run.status,
      error: run.error,
      turns: run.turns,
      usage: run.usage,
      cost_usd: run.costUsd,
      duration_ms: run.startedAt !== null && run.finishedAt !== null ? run.finishedAt - run.startedAt : 0,
      active_ms: run.activeMs,
      plan_id: run.planId,
    });
  }
}

/** An error as one line for a run record: the model API's status and type when it has them. */
export function describe(err: unknown): string {
  const e = err as {
    status?: number;
    error?: { error?: { type?: string; message?: string } };
    message?: string;
  };
  if (typeof e?.status === 'number') {
    const type = e.error?.error?.type;
    const message = e.error?.error?.message ?? e.message;
    return `model request failed: ${e.status}${type ? ` ${type}` : ''}: ${message}`;
  }
  return `${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)}`;
}
