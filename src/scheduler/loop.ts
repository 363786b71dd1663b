import type { SpendCaps, SpendSnapshot } from '../caps/spend-caps.js';
import type { Clock } from '../clock.js';
import type { SpendCapHit } from '../domain/spend.js';
import type { Run } from '../domain/types.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { PassLoop } from '../pass-loop.js';
import { type AdvanceResult, type JobStore, StoreUnavailableError } from '../store/store.js';
import { capSlot } from './cap-slot.js';
import { decide } from './decide.js';
import type { JitterOptions } from './jitter.js';

export interface SchedulerOptions {
  store: JobStore;
  clock: Clock;
  logger: Logger;
  /** Receives every run the scheduler creates. */
  onRun: (run: Run) => void;
  catchupWindowMs: number;
  maxWaitMs: number;
  batchSize: number;
  jitter: JitterOptions;
  /** `buffer_all`: the most slots one job holds waiting (config scheduler.max_buffered_slots). */
  maxBuffered: number;
  /**
   * Cancels a run through the runs' own cancel path (as `drydock runs cancel`): a `cancel_other` job's
   * transition names the runs it supersedes, canceled once that transition is stored.
   */
  cancelRun: (runId: string) => Promise<unknown>;
  /** Observes each fired slot's lateness (ms after its jittered due time). */
  onLateness?: (ms: number) => void;
  /** Receives each finished pass's tally (metrics), whether the timer or a caller of `tick()` ran it. */
  onReport?: (report: TickReport) => void;
  /** Spend caps: a slot that would fire past one is recorded `capped` instead (default: no caps). */
  caps?: SpendCaps;
}

export interface TickReport {
  at: number;
  fired: number;
  pending: number;
  missed: number;
  coalesced: number;
  /** Slots dropped by an overlap policy (`skip`, or past `buffer_all`'s limit). */
  skipped: number;
  /** Runs canceled by `cancel_other`. */
  canceled: number;
  /** Slots a spend cap stopped. */
  capped: number;
  /** How long the loop will sleep before the next tick. */
  sleepMs: number;
}

/** The longest wait before a failed tick is tried again. */
const MAX_RETRY_MS = 30_000;

/**
 * The cron loop, on a PassLoop over the injected clock. Due times live in the store (indexed); each tick
 * handles what is due, then sleeps until the earliest due time, never longer than `maxWaitMs`, and
 * recomputes from the clock on waking, so a timer that fires early or late only shifts one tick. No timer or
 * cron object per job.
 */
export class Scheduler {
  private readonly loop: PassLoop;
  private running: Promise<TickReport> | null = null;
  /** Ticks that failed in a row (the next retry waits longer after each). */
  private failures = 0;
  private startedAt = 0;
  /** When the loop's timer should fire next (what the last pass asked for), to report a late wake. */
  private expectedWakeAt: number | null = null;
  /** Kicked while a tick ran: look again right after it, unless it failed (then the backoff holds). */
  private kickedDuringTick = false;

  constructor(private readonly opts: SchedulerOptions) {
    this.loop = new PassLoop({ pass: () => this.wake(), clock: opts.clock });
  }

  start(): void {
    if (!this.loop.stopped) return;
    this.startedAt = this.opts.clock.now();
    this.expectedWakeAt = this.startedAt;
    this.loop.start();
  }

  /** Stops the timer and waits for a tick in progress to finish. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.running?.catch(() => undefined);
  }

  get isRunning(): boolean {
    return !this.loop.stopped;
  }

  /** Something changed (a job was created, a run ended): look again now rather than at the next wake. */
  kick(): void {
    if (this.running) {
      this.kickedDuringTick = true;
      return;
    }
    this.expectedWakeAt = null;
    this.loop.kick();
  }

  /** One pass: fire what is due at the clock's now. Safe to call directly (tests do); ticks never overlap. */
  async tick(): Promise<TickReport> {
    if (this.running) {
      this.kickedDuringTick = true;
      return this.running;
    }
    if (this.startedAt === 0) this.startedAt = this.opts.clock.now();
    this.running = this.pass();
    try {
      const report = await this.running;
      this.opts.onReport?.(report);
      return report;
    } finally {
      this.running = null;
    }
  }

  /** The loop's pass: a tick, then how long to sleep (the tick's answer, or a backoff after a failure). */
  private async wake(): Promise<number> {
    const { clock, logger } = this.opts;
    const drift = this.expectedWakeAt === null ? 0 : clock.now() - this.expectedWakeAt;
    if (drift > 1_000) logger.warn({ drift_ms: drift }, 'scheduler timer fired late');
    let sleepMs: number;
    try {
      sleepMs = (await this.tick()).sleepMs;
      this.failures = 0;
      if (this.kickedDuringTick) sleepMs = 0;
    } catch (err) {
      // The store is unreachable, say: tried again after 1, 2, 4 ... at most 30 s, not every second (slots
      // that passed meanwhile are handled by the catch-up rules when a tick gets through).
      this.failures += 1;
      sleepMs = Math.min(MAX_RETRY_MS, 1_000 * 2 ** (this.failures - 1));
      // An unreachable database is logged once per outage by the store.
      logger[err instanceof StoreUnavailableError ? 'debug' : 'error'](
        { err, failures: this.failures, retry_in_ms: sleepMs },
        'scheduler tick failed; retrying',
      );
    }
    this.kickedDuringTick = false;
    this.expectedWakeAt = clock.now() + sleepMs;
    return sleepMs;
  }

  private async pass(): Promise<TickReport> {
    const { store, clock, batchSize } = this.opts;
    const report: TickReport = {
      at: clock.now(),
      fired: 0,
      pending: 0,
      missed: 0,
      coalesced: 0,
      skipped: 0,
      canceled: 0,
      capped: 0,
      sleepMs: 0,
    };
    // Slots that waited for their session to go idle first, then what the clock says is due.
    for (const list of [
      () => store.listReadyPendingJobIds(batchSize),
      () => store.listDueJobIds(clock.now(), batchSize),
    ]) {
      for (;;) {
        const ids = await list();
        if (ids.length === 0) break;
        const now = clock.now();
        // The day's spend is read once per batch, before the store's transaction: decisions stay synchronous.
        const spend = (await this.opts.caps?.snapshot(now)) ?? null;
        const hits = new Map<string, SpendCapHit>();
        const results = await store.advanceJobs(ids, now, (job, busy, runs) =>
          capSlot(
            job,
            decide(
              job,
              busy,
              {
                now,
                startedAt: this.startedAt,
                catchupWindowMs: this.opts.catchupWindowMs,
                jitter: this.opts.jitter,
                newRunId: () => newId('run'),
                maxBuffered: this.opts.maxBuffered,
              },
              runs,
            ),
            spend,
            hits,
          ),
        );
        await this.account(results, report, clock.now());
        await this.noteCaps(results, hits, spend);
        if (ids.length < batchSize || results.length === 0) break;
      }
    }
    const earliest = await store.earliestDueAt();
    const now = clock.now();
    report.sleepMs = Math.min(
      this.opts.maxWaitMs,
      Math.max(0, earliest === null ? Infinity : earliest - now),
    );
    return report;
  }

  /** Notes each cap that stopped a slot (announced once per scope and day, across replicas). */
  private async noteCaps(
    results: AdvanceResult[],
    hits: Map<string, SpendCapHit>,
    spend: SpendSnapshot | null,
  ): Promise<void> {
    const { caps } = this.opts;
    if (!caps || !spend) return;
    const noted = new Set<string>();
    for (const { jobId, transition } of results) {
      const hit = transition.capped ? hits.get(jobId) : undefined;
      if (!hit || noted.has(`${hit.scope}:${hit.id}`)) continue;
      noted.add(`${hit.scope}:${hit.id}`);
      await caps.note(hit, spend.day);
    }
  }

  private async account(results: AdvanceResult[], report: TickReport, firedAt: number): Promise<void> {
    for (const { run, transition: t } of results) {
      for (const c of t.cancel ?? []) await this.cancel(c.runId);
      report.coalesced += t.coalesce.length;
      report.skipped += t.skip?.length ?? 0;
      report.canceled += t.cancel?.length ?? 0;
      if (t.capped) report.capped += 1;
      if (t.missed) report.missed += t.missed.slots;
      if (t.pending && !t.fire) report.pending += 1;
      if (run) {
        report.fired += 1;
        if (t.fire?.dueAt != null) this.opts.onLateness?.(firedAt - t.fire.dueAt);
        this.opts.onRun(run);
      }
    }
  }

  /** A run a `cancel_other` slot supersedes; its slot is recorded canceled already, whatever this answers. */
  private async cancel(runId: string): Promise<void> {
    try {
      await this.opts.cancelRun(runId);
    } catch (err) {
      this.opts.logger.warn({ err, run_id: runId }, 'cancel_other: canceling the superseded run failed');
    }
  }
}
