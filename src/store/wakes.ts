/**
 * What other processes on the same database changed, as hints to look again (never the data itself):
 * `runs` a run was queued, parked, released or ended, or a question or tool approval was answered; `events`
 * an event was appended (payload: the run id); `inbox` a webhook delivery was queued; `outbox` a plan
 * delivery or notification was queued.
 */
export type WakeChannel = 'runs' | 'events' | 'inbox' | 'outbox';

export interface WakeStore {
  /**
   * Calls `listener` when a process (this one or another) committed a change of that kind: PostgreSQL
   * LISTEN/NOTIFY; the SQLite store (one process) never calls it. Polling stays the fallback: a wake may be
   * lost while the listening connection is being made again. Returns the unsubscribe.
   */
  onWake(channel: WakeChannel, listener: (payload: string) => void): () => void;
}
