import { EventEmitter } from 'node:events';
import type { Clock } from '../clock.js';
import type { RunEventMap, RunEventType } from '../domain/events.js';
import type { RunEvent } from '../domain/types.js';
import type { RunStore } from '../store/store.js';

/**
 * The per-run event log: every event is appended to the store (numbered) before listeners hear of it, so
 * a client that reconnects with Last-Event-ID replays exactly what it missed.
 */
export class RunEvents {
  private readonly emitter = new EventEmitter();

  constructor(
    private readonly store: RunStore,
    private readonly clock: Clock,
  ) {
    // One listener per open SSE stream; many may watch one run.
    this.emitter.setMaxListeners(0);
  }

  /** Appends an event of a known type with the payload that type carries (src/domain/events.ts). */
  async emit<K extends RunEventType>(runId: string, type: K, data: RunEventMap[K]): Promise<RunEvent> {
    const event = await this.store.appendEvent(runId, type, data, this.clock.now());
    this.emitter.emit(runId, event);
    this.emitter.emit(ALL, event);
    return event;
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

/** The event that closes a run's stream. */
export const RUN_FINISHED = 'run_finished' satisfies RunEventType;
