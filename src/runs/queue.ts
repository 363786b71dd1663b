import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { Run, RunStatus } from '../store/types.js';

export interface RunOutcome {
  status: Exclude<RunStatus, 'queued' | 'running'>;
  error?: string | null;
}

/** Carries out one run. The agent comes in through this interface; the queue owns ordering and limits. */
export interface RunExecutor {
  execute(run: Run, signal: AbortSignal): Promise<RunOutcome>;
}

/** Until an agent is configured, a run cannot be carried out: it fails with a reason that says so. */
export const noAgentExecutor: RunExecutor = {
  async execute() {
    return { status: 'failed', error: 'no agent runner is configured in this build of drydock' };
  },
};

export interface RunQueueOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  executor: RunExecutor;
  maxConcurrent: number;
  /** Called after each run settles (the scheduler uses it to fire slots that waited for an idle session). */
  onSettled?: (run: Run) => void;
}

/**
 * Hands queued runs to the executor: at most `maxConcurrent` at once, one at a time per session, and fair
 * across sessions (round robin over sessions that have work, so one busy session cannot starve others).
 */
export class RunQueue {
  private readonly waiting = new Map<string, Run[]>(); // session id -> its queued runs, oldest first
  private readonly active = new Map<string, { run: Run; abort: AbortController; done: Promise<void> }>();
  private readonly busySessions = new Set<string>();
  private accepting = true;

  constructor(private readonly opts: RunQueueOptions) {}

  get activeCount(): number {
    return this.active.size;
  }

  submit(run: Run): void {
    if (!this.accepting) return; // stays queued in the store; picked up by recover() on the next start
    const list = this.waiting.get(run.sessionId) ?? [];
    if (list.some((r) => r.id === run.id) || this.active.has(run.id)) return;
    list.push(run);
    this.waiting.set(run.sessionId, list);
    this.pump();
  }

  /**
   * On start: runs left `running` by a process that died are marked interrupted; queued ones are picked up.
   */
  async recover(): Promise<{ requeued: number; interrupted: number }> {
    let interrupted = 0;
    let requeued = 0;
    for (const status of ['running', 'queued'] as const) {
      let cursor: string | undefined;
      do {
        const page = await this.opts.store.listRuns({ status, limit: 200, cursor });
        for (const run of page.items.reverse()) {
          if (status === 'running') {
            const ok = await this.opts.store.transitionRun(run.id, ['running'], 'interrupted', {
              finishedAt: this.opts.clock.now(),
              error: 'the daemon stopped while this run was in progress',
            });
            if (ok) interrupted += 1;
          } else {
            this.submit(run);
            requeued += 1;
          }
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    return { requeued, interrupted };
  }

  /** Stops taking work; waits up to `graceMs` for active runs, then aborts them (they end interrupted). */
  async drain(graceMs: number): Promise<void> {
    this.accepting = false;
    this.waiting.clear();
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
      for (const a of this.active.values()) a.abort.abort(new Error('daemon shutting down'));
      await all();
    }
  }

  /** Aborts a run that is executing; true when it was active here. */
  cancel(runId: string, reason: string): boolean {
    const a = this.active.get(runId);
    if (!a) return false;
    a.abort.abort(new Error(reason));
    return true;
  }

  private pump(): void {
    while (this.accepting && this.active.size < this.opts.maxConcurrent) {
      const sessionId = this.nextSession();
      if (!sessionId) return;
      const list = this.waiting.get(sessionId)!;
      const run = list.shift()!;
      // Round robin: a session that just got a turn goes to the back of the line.
      this.waiting.delete(sessionId);
      if (list.length) this.waiting.set(sessionId, list);
      this.start(run);
    }
  }

  private nextSession(): string | undefined {
    for (const [sessionId, list] of this.waiting) {
      if (list.length && !this.busySessions.has(sessionId)) return sessionId;
    }
    return undefined;
  }

  private start(run: Run): void {
    const abort = new AbortController();
    this.busySessions.add(run.sessionId);
    const done = this.execute(run, abort).finally(() => {
      this.active.delete(run.id);
      this.busySessions.delete(run.sessionId);
      this.pump();
    });
    this.active.set(run.id, { run, abort, done });
  }

  private async execute(run: Run, abort: AbortController): Promise<void> {
    const { store, clock, logger } = this.opts;
    const claimed = await store.transitionRun(run.id, ['queued'], 'running', { startedAt: clock.now() });
    if (!claimed) return; // canceled meanwhile, or another process took it
    let outcome: RunOutcome;
    try {
      outcome = await this.opts.executor.execute(run, abort.signal);
    } catch (err) {
      outcome = abort.signal.aborted
        ? { status: 'interrupted', error: String((abort.signal.reason as Error)?.message ?? 'aborted') }
        : { status: 'failed', error: (err as Error).message };
    }
    await store.transitionRun(run.id, ['running', 'awaiting_input'], outcome.status, {
      finishedAt: clock.now(),
      error: outcome.error ?? null,
    });
    logger.info({ run_id: run.id, session_id: run.sessionId, status: outcome.status }, 'run finished');
    const settled = await store.getRun(run.id);
    if (settled) this.opts.onSettled?.(settled);
  }
}
