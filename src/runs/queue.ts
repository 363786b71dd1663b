import type { Clock } from '../clock.js';
import {
  isFailedRunStatus,
  isFinishedRunStatus,
  type Run,
  type RunStatus,
  type RunWait,
} from '../domain/types.js';
import type { Logger } from '../logger.js';
import { PassLoop } from '../pass-loop.js';
import {
  type ApprovalStore,
  type Fence,
  FencedError,
  type Receipt,
  type RunStore,
  StoreUnavailableError,
  type WakeStore,
} from '../store/store.js';
import type { RunEvents } from './events.js';
import { type Hold, rideOutOutage } from './holding.js';
import { waitsOnSomeone } from './waiting.js';

export interface RunOutcome {
  status: Exclude<RunStatus, 'queued' | 'running'>;
  error?: string | null;
  /** With awaiting_input: the run waits on the account, not on a question (see RunWait). */
  waitingOn?: RunWait;
}

/**
 * Where a run starts from: `queued` (new, or taken back after its replica stopped or died) or
 * `awaiting_input` (resumed after an answer or a tool approval).
 */
export type RunStart = 'queued' | 'awaiting_input';

/**
 * Carries out one run. The agent comes in through this interface; the queue owns ordering and limits. Every
 * write it makes on the run's behalf goes through `holdingStore(store, hold)` (holding.ts): fenced by the
 * run's claim, riding out short database outages.
 */
export interface RunHandler {
  execute(run: Run, hold: Hold, from: RunStart): Promise<RunOutcome>;
}

/**
 * Why a run's signal was aborted: a person canceled it, the daemon is stopping (the run goes back to the
 * queue), or this replica lost its claim on the run (another replica took it over).
 */
export class RunAborted extends Error {
  constructor(readonly kind: 'cancel' | 'shutdown' | 'lease') {
    super(
      kind === 'cancel'
        ? 'canceled'
        : kind === 'shutdown'
          ? 'the daemon stopped while this run was in progress'
          : 'this replica no longer holds the run',
    );
  }
}

/** Default lease of a claim on a running run (config runs.lease_ms). */
export const DEFAULT_LEASE_MS = 30_000;
/** How often the queue looks for work on its own, at most (other replicas' runs; wake-ups make it sooner). */
const SWEEP_MS = 5_000;
/** How soon a renewal that met a database outage is tried again. */
const RENEW_RETRY_MS = 500;
/** Runs read per look at the store. */
const SWEEP_LIMIT = 200;

export interface RunQueueOptions {
  store: ApprovalStore & RunStore;
  clock: Clock;
  logger: Logger;
  events: RunEvents;
  handler: RunHandler;
  maxConcurrent: number;
  /** Called after each run settles or parks (the scheduler uses it to fire slots that waited). */
  onSettled?: (run: Run) => void;
  /** This daemon's name among the replicas on one database: its claims carry it. Default `local`. */
  replica?: string;
  /** How long a claim holds unless renewed (renewed every third of it). Default DEFAULT_LEASE_MS. */
  leaseMs?: number;
  /** Wake-ups from other replicas (a run queued, parked, released or answered there). */
  wakes?: WakeStore;
}

/** What the queue keeps of a waiting run. */
type Queued = Pick<Run, 'id' | 'sessionId' | 'status'>;

/**
 * Hands runs to the run handler: at most `maxConcurrent` executing at once, one run at a time per session
 * (a run parked on a question still holds its session), and fair across sessions: round robin over the
 * sessions that have work, so one busy session cannot starve the others.
 *
 * Several replicas on one database: the in-memory lines only order this replica's work; the store decides.
 * A run starts when this replica claims it (`claimRun`: one run per session across replicas) with a lease it
 * renews every third of `leaseMs`; a run whose lease ran out (its replica died) is taken back and retried by
 * whichever replica looks first. Once started (`start()`), the queue looks at the store every few seconds
 * and on every `runs` wake-up, for runs queued elsewhere, answered elsewhere, or left by a dead replica.
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
  /** Runs waiting on the account (RunWait): run id -> cancels the timer that submits it when the wait ends. */
  private readonly waitTimers = new Map<string, () => void>();
  /** Runs this replica holds a claim on, so renews the lease of: run id -> the claim's fence. */
  private readonly claimed = new Map<string, Fence>();
  private accepting = true;
  private readonly replica: string;
  private readonly leaseMs: number;
  private readonly sweeper = new PassLoop({ pass: () => this.sweep(), unref: true });
  private heartbeat: NodeJS.Timeout | null = null;
  /** A renewal tried again soon after one met a database outage. */
  private renewSoon: NodeJS.Timeout | null = null;
  private unwake: () => void = () => {};

  constructor(private readonly opts: RunQueueOptions) {
    this.replica = opts.replica ?? 'local';
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  }

  get activeCount(): number {
    return this.active.size;
  }

  get maxConcurrent(): number {
    return this.opts.maxConcurrent;
  }

  /** Queues a run: a new one (status queued) or a parked one to resume (status awaiting_input). */
  submit(run: Queued): void {
    if (!this.accepting) return; // stays in the store; recover() picks it up on the next start
    this.waitTimers.get(run.id)?.();
    this.waitTimers.delete(run.id);
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
   * On start. Runs left `running` by this replica before it stopped or died, or by a replica whose lease ran
   * out, are retried once from their stored conversation (then marked interrupted); runs another live
   * replica holds are left to it. Parked runs hold their sessions again; queued runs are picked up.
   */
  async recover(): Promise<{ requeued: number; retried: number; interrupted: number; parked: number }> {
    const tally = { requeued: 0, retried: 0, interrupted: 0, parked: 0 };
    const taken = await this.takeOver(this.replica);
    tally.retried = taken.retried;
    tally.interrupted = taken.interrupted;
    for (const status of ['awaiting_input', 'queued'] as const) {
      for (const run of await this.all(status)) {
        if (status === 'awaiting_input') {
          await this.park(run, run.waitingOn);
          tally.parked += 1;
        } else {
          this.submit(run);
          tally.requeued += 1;
        }
      }
    }
    return tally;
  }

  /**
   * Takes back the running runs no live replica holds (see `listRecoverableRuns`): each is retried once
   * (queued, attempt + 1), a second time it is marked interrupted. Status, claim and attempt change in one
   * statement: a crash in between grants no other retry, and of two replicas looking, one takes the run.
   * `own`: this replica's name at its start (the runs it held before it restarted are its to take back at
   * once); null later, when the runs claimed under this name are this process's own, or a newer process's
   * that took them back while this one was paused.
   */
  private async takeOver(own: string | null): Promise<{ retried: number; interrupted: number }> {
    const { store, clock, events, logger } = this.opts;
    const tally = { retried: 0, interrupted: 0 };
    for (;;) {
      const now = clock.now();
      const runs = (await store.listRecoverableRuns(own, now, SWEEP_LIMIT)).filter(
        (run) => !this.active.has(run.id),
      );
      let moved = 0;
      for (const run of runs) {
        if (
          run.attempt < 2 &&
          (await store.releaseRun(run.id, own, now, 'queued', {
            attempt: run.attempt + 1,
            receipt: events.withMove('run_interrupted', () => ({ retrying: true, attempt: run.attempt })),
          }))
        ) {
          logger.warn({ run_id: run.id, attempt: run.attempt + 1 }, 'run taken over: its replica stopped');
          tally.retried += 1;
          moved += 1;
          this.submit({ ...run, status: 'queued' });
        } else if (
          await store.releaseRun(run.id, own, now, 'interrupted', {
            finishedAt: now,
            error: 'the daemon stopped while this run was in progress (already retried once)',
            receipt: events.receipt(),
          })
        ) {
          tally.interrupted += 1;
          moved += 1;
        }
      }
      if (runs.length < SWEEP_LIMIT || moved === 0) return tally;
    }
  }

  /**
   * After recover(): renews the leases of the runs this replica executes, and looks at the store for work
   * every few seconds and whenever another replica says something changed.
   */
  start(): void {
    const every = Math.max(1, Math.floor(this.leaseMs / 3));
    this.heartbeat = setInterval(() => void this.renew(), every);
    this.heartbeat.unref();
    this.unwake = this.opts.wakes?.onWake('runs', () => this.sweeper.kick()) ?? (() => {});
    this.sweeper.start();
  }

  /** Renews this replica's leases; a run whose claim is gone (taken over after a lapse) is stopped here. */
  private async renew(): Promise<void> {
    const fences = [...this.claimed.values()];
    if (!fences.length) return;
    try {
      const held = new Set(
        await this.opts.store.renewRunLeases(fences, this.opts.clock.now() + this.leaseMs),
      );
      for (const fence of fences) if (!held.has(fence.runId)) this.lost(fence);
    } catch (err) {
      // The database may be back before the lease runs out. An outage is logged once by the store; anything
      // else here is worth a line.
      if (!(err instanceof StoreUnavailableError)) {
        this.opts.logger.warn({ err }, 'could not renew run leases');
      } else if (this.heartbeat && !this.renewSoon) {
        // Tried again every half second, not at the next beat: after an outage as long as the lease, the
        // holder renews as soon as the database answers, before another replica's sweep finds it lapsed.
        this.renewSoon = setTimeout(() => {
          this.renewSoon = null;
          void this.renew();
        }, RENEW_RETRY_MS);
        this.renewSoon.unref();
      }
    }
  }

  /**
   * This process no longer holds the run (canceled elsewhere, taken over after its lease ran out, or taken
   * back by a restart of this replica while this process was paused): its work stops here, at once, and
   * nothing more of it is written (its writes are fenced).
   */
  private lost(fence: Fence): void {
    const { runId } = fence;
    // A write of an earlier execution of the run in this process may be refused late: only this claim's.
    if (this.claimed.get(runId) !== fence) return;
    this.claimed.delete(runId);
    this.opts.logger.warn(
      { run_id: runId },
      'this process no longer holds the run (canceled elsewhere, or taken over after its lease ran out): stopping it here',
    );
    this.active.get(runId)?.abort.abort(new RunAborted('lease'));
  }

  /** One look at the store: runs to take over, then runs some replica could start now. */
  private async sweep(): Promise<number> {
    try {
      // First the claims: a run of this replica canceled or taken over elsewhere stops now, not at the next beat.
      await this.renew();
      await this.takeOver(null);
      if (this.accepting && this.active.size < this.opts.maxConcurrent) {
        for (const run of await this.opts.store.listClaimableRuns(SWEEP_LIMIT, this.opts.clock.now())) {
          // The store says the session is free (or this is its parked run): what this replica remembers of
          // a parked run there is out of date (it was answered, canceled or expired elsewhere).
          const parkedRun = this.parked.get(run.sessionId);
          if (parkedRun !== undefined && parkedRun !== run.id) this.parked.delete(run.sessionId);
          this.submit(run);
        }
      }
    } catch (err) {
      // An outage is logged once by the store.
      if (!(err instanceof StoreUnavailableError)) {
        this.opts.logger.warn({ err }, 'looking for runs failed; trying again shortly');
      }
    }
    return SWEEP_MS;
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

  /** Starts nothing more: runs submitted from now on stay queued in the store for recover(). */
  pause(): void {
    this.accepting = false;
    this.fresh.clear();
    this.rotation.clear();
  }

  /**
   * Stops taking work; waits up to `graceMs` for executing runs, then aborts them: they go back to the queue
   * (another replica, or this one's next start, carries them on). The leases are renewed until the end.
   */
  async drain(graceMs: number): Promise<void> {
    this.pause();
    for (const cancel of this.waitTimers.values()) cancel();
    this.waitTimers.clear();
    this.unwake();
    await this.sweeper.stop();
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
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.renewSoon) clearTimeout(this.renewSoon);
    this.renewSoon = null;
  }

  /**
   * Cancels a run wherever it is: executing here (its model stream is aborted), executing on another
   * replica (ended in the store; that replica stops it when it finds its claim gone), waiting in the queue,
   * or parked on a question. Returns false when the run had already ended.
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
    // Running and not here: another replica executes it (this one claims runs only after listing them in
    // `active`). The status ends it; that replica's next look finds its claim gone and stops the run.
    const ok = await store.transitionRun(runId, ['queued', 'awaiting_input', 'running'], 'canceled', {
      finishedAt: clock.now(),
      error: 'canceled',
      receipt: this.opts.events.receipt(),
    });
    if (!ok) return false;
    this.waitTimers.get(runId)?.();
    this.waitTimers.delete(runId);
    for (const [sessionId, parkedRun] of this.parked) if (parkedRun === runId) this.parked.delete(sessionId);
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
      this.begin(run);
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

  private begin(run: Queued): void {
    const abort = new AbortController();
    this.busySessions.add(run.sessionId);
    const done = this.execute(run, abort)
      .catch((err) => {
        // A database outage is logged once, by the store; the run is taken over once its lease runs out.
        if (err instanceof StoreUnavailableError)
          this.opts.logger.debug({ err, run_id: run.id }, 'run put off');
        else this.opts.logger.error({ err, run_id: run.id }, 'run bookkeeping failed');
      })
      .finally(() => {
        this.active.delete(run.id);
        this.busySessions.delete(run.sessionId);
        if (this.resumeSoon.delete(run.id)) this.submit({ ...run, status: 'awaiting_input' });
        this.pump();
      });
    this.active.set(run.id, { run, abort, done });
  }

  private async execute(run: Queued, abort: AbortController): Promise<void> {
    const { store, clock } = this.opts;
    const from = run.status === 'awaiting_input' ? 'awaiting_input' : 'queued';
    const claim = { replica: this.replica, leaseUntil: clock.now() + this.leaseMs };
    // Null: canceled meanwhile, another replica took it, or another run of its session holds the session.
    const fence = await store.claimRun(run.id, from, claim, clock.now());
    if (!fence) return;
    this.claimed.set(run.id, fence);
    try {
      await this.carryOut(run, from, abort, fence);
    } finally {
      if (this.claimed.get(run.id) === fence) this.claimed.delete(run.id);
    }
  }

  private async carryOut(run: Queued, from: RunStart, abort: AbortController, fence: Fence): Promise<void> {
    const { store, clock } = this.opts;
    const fresh = await this.despiteOutage(run.id, () => store.getRun(run.id));
    if (!fresh) return;
    let outcome: RunOutcome | null;
    const began = clock.now();
    const hold: Hold = { fence, signal: abort.signal, lost: () => this.lost(fence) };
    try {
      outcome = await this.opts.handler.execute(fresh, hold, from);
    } catch (err) {
      this.claimed.delete(run.id);
      outcome = await this.thrownOutcome(fresh, fence, abort.signal, err);
      if (outcome === null) return;
    }
    // Done with it: the store clears the claim now, and a renewal in flight must not take that for a loss.
    this.claimed.delete(run.id);
    const settled = await this.settle(run, outcome, fence, began);
    if (!settled) return;
    if (outcome.status === 'awaiting_input') {
      await this.park(run, outcome.waitingOn);
    } else {
      const fields = { run_id: run.id, session_id: run.sessionId, status: outcome.status };
      // A run that did not end as meant is worth a look: warn, with the reason.
      if (!isFailedRunStatus(outcome.status)) {
        this.opts.logger.info(fields, 'run finished');
      } else {
        this.opts.logger.warn({ ...fields, reason: outcome.error ?? null }, 'run finished without success');
      }
    }
    const after = settled.ended ?? (await this.despiteOutage(run.id, () => store.getRun(run.id)));
    if (after) this.opts.onSettled?.(after);
  }

  /**
   * The outcome of a run whose handler threw: canceled or failed; null when nothing more of it is written
   * here (another process carries it on, it went back to the queue, or a database outage cut it off).
   */
  private async thrownOutcome(
    fresh: Run,
    fence: Fence,
    signal: AbortSignal,
    err: unknown,
  ): Promise<RunOutcome | null> {
    const { store, logger, events } = this.opts;
    const reason = signal.aborted ? signal.reason : null;
    // Another process carries it on: nothing more of this one is written.
    if (err instanceof FencedError || (reason instanceof RunAborted && reason.kind === 'lease')) return null;
    if (reason instanceof RunAborted && reason.kind === 'shutdown') {
      // Back to the queue, attempt unchanged: stopping a replica is no fault of the run's.
      const interrupted = events.withMove('run_interrupted', () => ({
        retrying: true,
        attempt: fresh.attempt,
      }));
      if (await store.transitionRun(fresh.id, ['running'], 'queued', { fence, receipt: interrupted })) {
        logger.info({ run_id: fresh.id }, 'run handed back to the queue: the daemon is stopping');
      }
      return null;
    }
    if (err instanceof StoreUnavailableError && !(reason instanceof RunAborted && reason.kind === 'cancel')) {
      // The run's own writes met a database outage longer than they wait (OUTAGE_WAIT_MS): what it did is
      // not all recorded, so no outcome is written. Its claim is no longer renewed: once the database
      // answers and the lease has run out, a replica (this one, or another) takes it over, its one retry
      // from what was stored.
      // The outage itself is the one warning (logged by the store); this names the run it cost.
      logger.info(
        { run_id: fresh.id, err },
        'run cut off by a database outage: it is taken over once the database answers and its lease runs out',
      );
      return null;
    }
    return reason instanceof RunAborted
      ? { status: 'canceled', error: reason.message }
      : { status: 'failed', error: describe(err) };
  }

  /**
   * Writes the run's end; null when another replica took the run over meanwhile (nothing is written). A run
   * that ended comes back as its end left it (`ended`, the row its receipt was made from: no read after).
   */
  private async settle(
    run: Queued,
    outcome: RunOutcome,
    fence: Fence,
    began: number,
  ): Promise<{ ended: Run | null } | null> {
    const { store, clock, logger, events } = this.opts;
    const terminal = isFinishedRunStatus(outcome.status);
    const ended = clock.now();
    let endedRun: Run | null = null;
    /** The run's receipt, which also keeps the run as its end left it. */
    const receipt = (): Receipt => {
      const r = events.receipt();
      return {
        ...r,
        event: (run) => {
          endedRun = run;
          return r.event(run);
        },
      };
    };
    // The run's work is done and recorded: only its end is left to write, and a database outage just then
    // would have it done again. Written once the database answers (the claim check still applies).
    // Its receipt (run_finished) is written with its end, in one transaction: a reader who sees the run
    // ended finds the receipt in its log.
    const settled = await this.despiteOutage(run.id, () =>
      store.transitionRun(run.id, ['running'], outcome.status, {
        activeMs: ended - began,
        fence,
        ...(terminal ? { finishedAt: ended, receipt: receipt() } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        ...(outcome.waitingOn ? { waitingOn: outcome.waitingOn } : {}),
      }),
    );
    if (!settled) {
      // The lease ran out unseen (a database outage longer than it) and another replica took the run.
      logger.warn(
        { run_id: run.id, status: outcome.status },
        'run outcome dropped: another replica took it over',
      );
      return null;
    }
    return { ended: endedRun };
  }

  /**
   * `call`, tried again while the database cannot be reached, for up to OUTAGE_WAIT_MS and not once this
   * replica is stopping (rideOutOutage): then the error stands (the run stays claimed, and is taken over).
   * The outage itself is logged once, by the store.
   */
  private despiteOutage<T>(runId: string, call: () => Promise<T>): Promise<T> {
    return rideOutOutage(
      (n) => {
        if (n === 1) this.opts.logger.debug({ run_id: runId }, 'run waits for the database');
        return call();
      },
      () => this.accepting,
    );
  }

  /**
   * The run waits for a person and keeps its session. An answer that arrived while the run was still
   * executing found it not yet parked: resume at once in that case.
   */
  private async park(run: Queued, wait?: RunWait | null): Promise<void> {
    this.parked.set(run.sessionId, run.id);
    if (wait) return this.resumeAt(run, wait.until);
    if (await this.despiteOutage(run.id, () => waitsOnSomeone(this.opts.store, run.id))) return;
    // Still executing: resubmit once its slot is released (see begin()).
    if (this.active.has(run.id)) this.resumeSoon.add(run.id);
    else this.submit({ ...run, status: 'awaiting_input' });
  }

  /**
   * A run waiting on the account goes back to the queue when its wait ends (on the injected clock); an admin's
   * resume submits it sooner. Other replicas find it then too (listClaimableRuns).
   */
  private resumeAt(run: Queued, until: number): void {
    this.waitTimers.get(run.id)?.();
    const cancel = this.opts.clock.setTimer(
      () => {
        this.waitTimers.delete(run.id);
        this.submit({ id: run.id, sessionId: run.sessionId, status: 'awaiting_input' });
      },
      Math.max(0, until - this.opts.clock.now()),
    );
    this.waitTimers.set(run.id, cancel);
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
