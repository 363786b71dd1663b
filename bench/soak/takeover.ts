import { readFileSync } from 'node:fs';
import { foldError } from './audit.js';
import type { AuditDb } from './audit-db.js';
import { failureList } from './failures.js';
import { bump } from './stats.js';

// Takeovers: what became of the runs a SIGKILL cut off. Right after each kill (the process is gone, its claims
// are frozen until their lease runs out) the runs the killed replica held are read from the store: `running`
// and claimed by it. After the soak each must have been taken over (a run_interrupted event after the kill:
// requeued by another replica once the lease ran out, or by the killed one's restart, which takes its own
// runs back at once) in time, and then have finished or be legitimately parked; not be stuck running, queued
// or claimed, nor have failed. Who took a run over is read from the replicas' logs ('run taken over').

/** The queue looks for runs to take over this often (src/runs/queue.ts, SWEEP_MS). */
const SWEEP_MS = 5_000;
/** Added to the takeover bound: a pass slowed by load on 2 CPUs, a restart's recovery under way. */
const TAKEOVER_SLACK_MS = 10_000;
/** A run ended as meant, or waiting for a person (an answer): nothing owed by the daemon. */
const SETTLED_OK = new Set(['planned', 'completed', 'awaiting_input']);

export interface HeldRun {
  id: string;
  phase: string;
  source: string;
  attempt: number;
}

export interface KillSnapshot {
  index: number;
  replica: string;
  /** Date.now() once the killed process had exited. */
  killedAt: number;
  /** Date.now() when its restart answered /readyz (null: it was not restarted). */
  restartReadyAt: number | null;
  /** Other replicas up at the kill (they take its runs over once the lease runs out). */
  othersUp: number;
  /** Runs `running` and claimed by the killed replica, read right after the kill; null when that read failed. */
  held: HeldRun[] | null;
  /** Why the read failed. */
  error: string | null;
}

/** Reads the runs `replica` holds: `running` and claimed by it. */
export async function heldRuns(db: AuditDb, replica: string): Promise<HeldRun[]> {
  return db.all<HeldRun>(
    `SELECT id, phase, source, attempt FROM runs WHERE status = 'running' AND claimed_by = ? ORDER BY id`,
    replica,
  );
}

/** What a replica's log says it did. */
export interface ReplicaLog {
  /** 'run finished' (info) and 'run finished without success' (warn) lines: runs it carried to their end. */
  ended: number;
  endedWithoutSuccess: number;
  /** 'run taken over: its replica stopped' lines, by run id, with their times (Date.now() values). */
  tookOver: Map<string, number[]>;
}

export function readReplicaLog(file: string): ReplicaLog {
  const log: ReplicaLog = { ended: 0, endedWithoutSuccess: 0, tookOver: new Map() };
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return log;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: string; run_id?: string; time?: string } | null = null;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry?.msg === 'run finished') log.ended += 1;
    else if (entry?.msg === 'run finished without success') {
      log.ended += 1;
      log.endedWithoutSuccess += 1;
    } else if (entry?.msg === 'run taken over: its replica stopped' && entry.run_id) {
      const times = log.tookOver.get(entry.run_id) ?? [];
      log.tookOver.set(entry.run_id, times);
      times.push(Date.parse(entry.time ?? ''));
    }
  }
  return log;
}

/** Whether another run of `runId`'s session waits for an answer: the session stays held until it comes. */
async function parkedInSession(db: AuditDb, runId: string): Promise<boolean> {
  const row = await db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM runs p JOIN runs r ON r.session_id = p.session_id
     WHERE r.id = ? AND p.id != r.id AND p.status = 'awaiting_input'`,
    runId,
  );
  return (row?.n ?? 0) > 0;
}

export interface TakeoverInput {
  kills: KillSnapshot[];
  /** The replicas' logs, by replica id. */
  logs: Map<string, ReplicaLog>;
  leaseMs: number;
  /** Date.now() when the load stopped and SIGTERM went out: interruptions after it are hand-backs. */
  stopAt: number;
}

export interface TakeoverResult {
  /** (kill, run) pairs: runs held by a replica when it was killed. */
  held: number;
  takenOver: number;
  /** By the killed replica's own restart, by another replica, by a replica no log names. */
  byRestart: number;
  byOther: number;
  takerUnknown: number;
  /** Final status of the held runs (parked = awaiting_input). */
  outcomes: Record<string, number>;
  notTakenOver: number;
  late: number;
  /** Ended failed, canceled, ... or interrupted though cut off only once. */
  badEnd: number;
  /** Still running, queued (and not handed back at the stop) or claimed at the end. */
  stuck: number;
  /** Interrupted after being cut off by two kills: the one retry spent, as designed. */
  interruptedTwice: number;
  /** Taken over, then handed back to the queue by the final SIGTERM. */
  handedBackAtStop: number;
  /** Taken over, queued at the stop behind a run of its session parked for an answer (the session is held). */
  queuedBehindParked: number;
  latencies: number[];
  /** Runs still claimed by some replica after every replica stopped cleanly. */
  stillClaimed: number;
  /** run_interrupted events (retrying) before the stop for runs no kill cut off: takeovers of another cause. */
  otherInterruptions: number;
  /** Kills whose read of the held runs failed. */
  unreadKills: number;
  failures: string[];
}

export async function auditTakeovers(db: AuditDb, input: TakeoverInput): Promise<TakeoverResult> {
  const { failures, fail } = failureList();
  const r: TakeoverResult = {
    held: 0,
    takenOver: 0,
    byRestart: 0,
    byOther: 0,
    takerUnknown: 0,
    outcomes: {},
    notTakenOver: 0,
    late: 0,
    badEnd: 0,
    stuck: 0,
    interruptedTwice: 0,
    handedBackAtStop: 0,
    queuedBehindParked: 0,
    latencies: [],
    stillClaimed: 0,
    otherInterruptions: 0,
    unreadKills: 0,
    failures,
  };

  const interruptions = new Map<string, number[]>();
  for (const e of await db.all<{ run_id: string; data: string; at: number }>(
    `SELECT run_id, data, at FROM run_events WHERE type = 'run_interrupted' ORDER BY run_id, seq`,
  )) {
    if ((JSON.parse(e.data) as { retrying?: boolean }).retrying !== true) continue;
    const list = interruptions.get(e.run_id) ?? [];
    interruptions.set(e.run_id, list);
    list.push(e.at);
  }
  const killsOf = new Map<string, number>();
  for (const k of input.kills) for (const h of k.held ?? []) killsOf.set(h.id, (killsOf.get(h.id) ?? 0) + 1);

  for (const kill of input.kills) {
    if (kill.held === null) {
      r.unreadKills += 1;
      fail('runs held at a kill could not be read', `kill ${kill.index} (${kill.replica}): ${kill.error}`);
      continue;
    }
    // The latest a takeover is owed: another live replica once the lease ran out and its next look came, or
    // the killed replica's restart at once, whichever comes first.
    const byOther =
      kill.othersUp > 0 ? kill.killedAt + (input.leaseMs * 4) / 3 + SWEEP_MS : Number.POSITIVE_INFINITY;
    const byRestart = kill.restartReadyAt ?? Number.POSITIVE_INFINITY;
    const bound = Math.min(byOther, byRestart) + TAKEOVER_SLACK_MS;
    for (const held of kill.held) {
      r.held += 1;
      const label = `${held.id} (${held.source} ${held.phase}, attempt ${held.attempt}; kill ${kill.index} of ${kill.replica})`;
      const row = await db.get<{ status: string; error: string | null; claimed_by: string | null }>(
        'SELECT status, error, claimed_by FROM runs WHERE id = ?',
        held.id,
      );
      const at = (interruptions.get(held.id) ?? []).find((t) => t >= kill.killedAt && t < input.stopAt);
      if (at === undefined) {
        r.notTakenOver += 1;
        fail('run held at a kill never taken over', `${label}: now ${row?.status ?? 'missing'}`);
      } else {
        r.takenOver += 1;
        r.latencies.push(at - kill.killedAt);
        if (at > bound) {
          r.late += 1;
          fail(
            'run taken over late',
            `${label}: ${((at - kill.killedAt) / 1000).toFixed(1)} s after the kill, owed within ${((bound - kill.killedAt) / 1000).toFixed(1)} s`,
          );
        }
        // The log line of the takeover: the first after the kill on any replica.
        let taker: string | null = null;
        let first = Number.POSITIVE_INFINITY;
        for (const [replica, log] of input.logs) {
          const t = (log.tookOver.get(held.id) ?? []).find((x) => x >= kill.killedAt - 1_000);
          if (t !== undefined && t < first) {
            first = t;
            taker = replica;
          }
        }
        if (taker === null) r.takerUnknown += 1;
        else if (taker === kill.replica) r.byRestart += 1;
        else r.byOther += 1;
      }
      const status = row?.status ?? 'missing';
      bump(r.outcomes, status);
      const handedBack = (interruptions.get(held.id) ?? []).some((t) => t >= input.stopAt);
      if (row?.claimed_by) {
        r.stuck += 1;
        fail(
          'run held at a kill still claimed at the end',
          `${label}: ${status}, claimed by ${row.claimed_by}`,
        );
      } else if (SETTLED_OK.has(status)) {
        // finished, or parked for a person
      } else if (status === 'queued' && handedBack) {
        r.handedBackAtStop += 1;
      } else if (status === 'queued' && (await parkedInSession(db, held.id))) {
        r.queuedBehindParked += 1;
      } else if (status === 'running' || status === 'queued') {
        r.stuck += 1;
        fail('run held at a kill never finished', `${label}: ${status} at the end`);
      } else if (status === 'interrupted' && (killsOf.get(held.id) ?? 0) > 1) {
        r.interruptedTwice += 1;
      } else {
        r.badEnd += 1;
        fail(
          'run held at a kill ended badly after its takeover',
          `${label}: ${status}: ${foldError(row?.error ?? null)}`,
        );
      }
    }
  }

  r.stillClaimed = (await db.get<{ n: number }>(
    'SELECT COUNT(*) AS n FROM runs WHERE claimed_by IS NOT NULL',
  ))!.n;
  if (r.stillClaimed) fail('runs still claimed after every replica stopped', String(r.stillClaimed));
  for (const [id, times] of interruptions) {
    if (!killsOf.has(id)) r.otherInterruptions += times.filter((t) => t < input.stopAt).length;
  }
  return r;
}
