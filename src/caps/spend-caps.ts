import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import {
  NO_SPEND,
  reachedCap,
  type SpendCap,
  SpendCapError,
  type SpendCapHit,
  type SpendDay,
  type SpendLimits,
  type SpendTally,
  spendDayOf,
} from '../domain/spend.js';
import type { NewNotification } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { SpendState, UsageStore } from '../store/usage.js';

/** Whose runs a check is about: a run's session and the trigger that started it (null: none). */
export interface SpendSubject {
  sessionId: string | null;
  triggerId: string | null;
}

export interface SpendCapsDeps {
  store: UsageStore;
  clock: Clock;
  config: Pick<Config, 'limits'>;
  logger: Logger;
  /**
   * The notifications that announce a cap reached (limit.reached), written by the store with the day's note
   * of it, so exactly one replica announces it (default: none).
   */
  announce?: (hit: SpendCapHit, day: SpendDay) => NewNotification[];
  /** Told once per scope and day (across replicas) when a cap is first reached: metrics. */
  onReached?: (hit: SpendCapHit) => void;
}

/**
 * One read of a day's spend: which cap, if any, a run of a subject meets. Taken before a batch of decisions
 * (the scheduler's) so that the decisions stay pure and synchronous.
 */
export class SpendSnapshot {
  constructor(
    readonly day: SpendDay,
    private readonly state: SpendState,
    private readonly global: SpendLimits,
  ) {}

  /** Counts one more run of the subject, created since the snapshot was read (within one batch). */
  count(subject: SpendSubject): void {
    const { state } = this;
    const more = (t: SpendTally | undefined): SpendTally => ({
      runs: (t?.runs ?? 0) + 1,
      costUsd: t?.costUsd ?? 0,
    });
    state.global = more(state.global);
    if (subject.sessionId) state.sessions.set(subject.sessionId, more(state.sessions.get(subject.sessionId)));
    if (subject.triggerId) state.triggers.set(subject.triggerId, more(state.triggers.get(subject.triggerId)));
  }

  /**
   * The first cap the subject's runs reached today, the trigger's first, then the session's, then the
   * global one; `only` looks at one kind of cap (a run going is only stopped by daily_usd).
   */
  hitFor(subject: SpendSubject, only?: SpendCap): SpendCapHit | null {
    const { state } = this;
    const scopes: [SpendCapHit['scope'], string | null, SpendLimits | undefined, typeof NO_SPEND][] = [
      [
        'trigger',
        subject.triggerId,
        subject.triggerId ? state.triggerLimits.get(subject.triggerId) : undefined,
        (subject.triggerId && state.triggers.get(subject.triggerId)) || NO_SPEND,
      ],
      [
        'session',
        subject.sessionId,
        subject.sessionId ? state.sessionLimits.get(subject.sessionId) : undefined,
        (subject.sessionId && state.sessions.get(subject.sessionId)) || NO_SPEND,
      ],
      ['global', null, this.global, state.global],
    ];
    for (const [scope, id, limits, tally] of scopes) {
      if (!limits || (scope !== 'global' && !id)) continue;
      const wanted = only ? { [only]: limits[only] } : limits;
      const hit = reachedCap(wanted, tally);
      if (hit) return { scope, id, ...hit, resetsAt: this.day.end };
    }
    return null;
  }
}

/**
 * Spend caps (docs/spend-caps.md): a trigger's, a session's and the global (config `limits`) daily_usd and
 * daily_runs, counted from the store's receipts by the day of `limits.timezone`, so every replica on one
 * database counts the same runs. Asked before a run is created (a fire, a run-now, a cron slot) and after
 * each turn of a run going.
 */
export class SpendCaps {
  constructor(private readonly deps: SpendCapsDeps) {}

  private get globalLimits(): SpendLimits {
    const { daily_usd, daily_runs } = this.deps.config.limits;
    return {
      ...(daily_usd !== null ? { daily_usd } : {}),
      ...(daily_runs !== null ? { daily_runs } : {}),
    };
  }

  /** The day of the limits zone that `at` falls in. */
  dayOf(at: number): SpendDay {
    return spendDayOf(at, this.deps.config.limits.timezone);
  }

  /** One read of the day's spend at `now`. */
  async snapshot(now = this.deps.clock.now()): Promise<SpendSnapshot> {
    const day = this.dayOf(now);
    return new SpendSnapshot(day, await this.deps.store.spendState(day), this.globalLimits);
  }

  /** Refuses (SpendCapError, API 429 `spend_cap`) a new run of the subject past a cap; notes the cap. */
  async admit(subject: SpendSubject): Promise<void> {
    const hit = await this.check(subject);
    if (hit) throw new SpendCapError(hit);
  }

  /** The cap a new run of the subject would start past, noted (once a day) when there is one. */
  async check(subject: SpendSubject): Promise<SpendCapHit | null> {
    const snapshot = await this.snapshot();
    const hit = snapshot.hitFor(subject);
    if (hit) await this.note(hit, snapshot.day);
    return hit;
  }

  /** Whether a run going has crossed a daily_usd cap (its own receipts counted): it parks until `resetsAt`. */
  async crossed(subject: SpendSubject): Promise<SpendCapHit | null> {
    const snapshot = await this.snapshot();
    const hit = snapshot.hitFor(subject, 'daily_usd');
    if (hit) await this.note(hit, snapshot.day);
    return hit;
  }

  /**
   * Records that a scope reached a cap on a day; the first replica to record it logs it and tells
   * `onReached` (later ones of the day say nothing).
   */
  async note(hit: SpendCapHit, day: SpendDay): Promise<void> {
    const { store, clock, logger } = this.deps;
    const now = clock.now();
    const announced = this.deps.announce?.(hit, day) ?? [];
    const first = await store.noteSpendCap(hit.scope, hit.id, day.day, hit.cap, now, announced);
    if (!first) return;
    logger.warn(
      { scope: hit.scope, id: hit.id, cap: hit.cap, limit: hit.limit, spent: hit.spent, day: day.day },
      'spend cap reached: no run of this scope starts until the day resets',
    );
    this.deps.onReached?.(hit);
  }
}
