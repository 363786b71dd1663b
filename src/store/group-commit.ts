/**
 * Group commit: calls made during one turn of the event loop are written together, in one call of `write`
 * (one transaction or statement) at the end of the turn, and each caller gets its own result. Under load many
 * webhooks arrive in a turn, and one write for all of them costs far less than one each; alone, a call waits
 * only for the rest of the current turn. One write is in flight at a time: calls made while it runs (a
 * networked store's round trip) wait for it and are then written together, so a slower store gets larger
 * batches rather than more writes at once.
 */
export class GroupCommit<I, O> {
  private pending: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  constructor(private readonly write: (items: I[]) => Promise<O[]>) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      if (!this.pending.length && !this.writing) setImmediate(() => void this.flush());
      this.pending.push({ item, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.writing = true;
    try {
      const out = await this.write(batch.map((b) => b.item));
      for (const [i, b] of batch.entries()) b.resolve(out[i]!);
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      this.writing = false;
      // What arrived meanwhile goes at the end of this turn, with whatever else the turn brings.
      if (this.pending.length) setImmediate(() => void this.flush());
    }
  }
}
