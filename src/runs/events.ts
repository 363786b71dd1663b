import { EventEmitter } from 'node:events';
import type { Clock } from '../clock.js';
import type { RunEventMap, RunEventType } from '../domain/events.js';
import type { Run, RunEvent } from '../domain/types.js';
import type { DecidedPlan, DecisionReceipt, Fence, Receipt, RunStore } from '../store/store.js';

/**
 * The per-run event log: every event is appended to the store (numbered) before listeners hear of it, so
 * a client that reconnects with Last-Event-ID replays exactly what it missed.
 */
export class RunEvents {
  constructor(
    private readonly store: Pick<RunStore, 'appendEvent'>,
    private readonly clock: Clock,
    // One listener per open SSE stream; many may watch one run. Shared by the views `fenced` makes.
    private readonly emitter = unlimited(new EventEmitter()),
  ) {}

  /**
   * The same log for a writer that holds a run's claim: every append carries `fence` (src/store/store.ts),
   * through `store` (the executor's own view of the store). Listeners are shared with this one.
   */
  fenced(store: Pick<RunStore, 'appendEvent'>, fence: Fence): RunEvents {
    return new RunEvents(
      { appendEvent: (runId, type, data, at) => store.appendEvent(runId, type, data, at, fence) },
      this.clock,
      this.emitter,
    );
  }

  /** Appends an event of a known type with the payload that type carries (src/domain/events.ts). */
  async emit<K extends RunEventType>(runId: string, type: K, data: RunEventMap[K]): Promise<RunEvent> {
    const event = await this.store.appendEvent(runId, type, data, this.clock.now());
    this.publish(event);
    return event;
  }

  /**
   * The receipt that ends a run's log (run_finished), for the store to write in the transaction that ends
   * the run (RunStore.transitionRun, releaseRun): listeners hear of it once that committed.
   */
  receipt(): Receipt {
    return this.withMove(RUN_FINISHED, receiptOf);
  }

  /**
   * An event to write in the transaction of a run's move (RunStore.transitionRun, releaseRun), made from the
   * run as the move left it: no event of the run's next holder can come before it.
   */
  withMove<K extends RunEventType>(type: K, data: (run: Run) => RunEventMap[K]): Receipt {
    return {
      at: this.clock.now(),
      event: (run) => ({ type, data: data(run) }),
      stored: (event) => this.publish(event),
    };
  }

  /**
   * An event to write in the transaction of a plan's decision (PlanStore.decidePlan), on the log of the run
   * that proposed the plan, made from what the decision recorded: listeners hear of it once that committed.
   */
  withDecision<K extends RunEventType>(
    type: K,
    data: (decided: DecidedPlan) => RunEventMap[K],
  ): DecisionReceipt {
    return {
      at: this.clock.now(),
      event: (decided) => ({ type, data: data(decided) }),
      stored: (event) => this.publish(event),
    };
  }

  private publish(event: RunEvent): void {
    this.emitter.emit(event.runId, event);
    this.emitter.emit(ALL, event);
  }

  /** Every event of every run (reporting back to GitHub, metrics). Listeners must not throw. */
  subscribeAll(listener: (event: RunEvent) => void): () => void {
    this.emitter.on(ALL, listener);
    return () => this.emitter.off(ALL, listener);
  }

  subscribe(runId: string, listener: (event: RunEvent) => void): () => void {
    this.emitter.on(runId, listener);
    return () => this.emitter.off(runId, listener);
  }
}

const ALL = Symbol('all runs');

function unlimited(emitter: EventEmitter): EventEmitter {
  emitter.setMaxListeners(0);
  return emitter;
}

/** The event that closes a run's stream. */
export const RUN_FINISHED = 'run_finished' satisfies RunEventType;

/** What a run's receipt says: its end, as the run's row shows it. */
export function receiptOf(run: Run): RunEventMap['run_finished'] {
  return {
    status: run.status,
    error: run.error,
    turns: run.turns,
    usage: run.usage,
    cost_usd: run.costUsd,
    duration_ms: run.startedAt !== null && run.finishedAt !== null ? run.finishedAt - run.startedAt : 0,
    active_ms: run.activeMs,
    plan_id: run.planId,
  };
}
