import type { WakeChannel, WakeStore } from '../wakes.js';

/**
 * The SQLite store serves one process, whose own code wakes itself after a change: no other process's change
 * needs announcing, so onWake registers nothing and never calls its listener.
 */
export class SqliteWakes implements WakeStore {
  onWake(_channel: WakeChannel, _listener: (payload: string) => void): () => void {
    return () => {};
  }
}
