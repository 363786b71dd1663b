import { sseEvents } from '../../src/cli/event-stream.js';
import { type DrillContext, startPlanRuns, waitPlanRequests, withDb } from './drill-context.js';
import { listenBackends } from './listeners.js';
import type { Replica } from './replicas.js';
import { sleep } from './stats.js';

// Drill 5 of issue 24: a run executes on one replica while a client follows its events
// (GET /v1/runs/:id/events) on the other, which learns of new events only through its LISTEN connection.
// That connection's backend is ended (pg_terminate_backend) shortly before the run ends. Does the stream
// still deliver every event through run_finished, and how long after the run ended? One trial without a cut
// for comparison, then cuts `lead` ms before the model's answer (which ends the run), the stream opened
// before the cut, and once opened right after it (while the connection is down).

interface TrialSpec {
  /** ms before the model's answer the LISTEN backend is ended; null: no cut (the control). */
  leadMs: number | null;
  /** Open the stream right after the cut (default: before it). */
  openAfterCut: boolean;
}

export interface ListenTrial extends TrialSpec {
  executor: string;
  streamer: string;
  /** The streamer's LISTEN backend was found and ended. */
  cut: boolean;
  /** Events stored through run_finished, and how many of them the stream delivered. */
  stored: number;
  received: number;
  gotFinished: boolean;
  /** The stream closed (null: still open when the drill gave up on it). */
  closed: boolean;
  /** From run_finished's `at` until the stream delivered it / closed. */
  finishedAfterMs: number | null;
  closedAfterMs: number | null;
  /** From the cut until the streamer listened again (null: not within the wait). */
  listenBackMs: number | null;
}

/** Cuts: long before the run ends (the connection is back in time), just before, at the answer. */
const TRIALS: readonly TrialSpec[] = [
  { leadMs: null, openAfterCut: false },
  { leadMs: 2_500, openAfterCut: false },
  { leadMs: 500, openAfterCut: false },
  { leadMs: 0, openAfterCut: false },
  { leadMs: 500, openAfterCut: true },
];
/** How long a stream may stay open after the run ended before the drill gives up on it (keep-alive: 15 s). */
const STREAM_WAIT_MS = 40_000;

export async function listenDrill(ctx: DrillContext): Promise<ListenTrial[]> {
  const trials: ListenTrial[] = [];
  const spread = ctx.modelDelay.spreadMs;
  ctx.modelDelay.spreadMs = 0;
  try {
    for (const [k, spec] of TRIALS.entries()) trials.push(await trial(ctx, k, spec));
  } finally {
    ctx.modelDelay.spreadMs = spread;
  }
  return trials;
}

async function trial(ctx: DrillContext, k: number, spec: TrialSpec): Promise<ListenTrial> {
  const { leadMs, openAfterCut } = spec;
  const before = ctx.model.tally.plans;
  const {
    ids: [runId],
  } = await startPlanRuns(ctx, 1, [ctx.replicas[k % ctx.replicas.length]!], `listen-${k + 1}`);
  const askedAt = await waitPlanRequests(ctx, before, 1);
  const claimedBy = await withDb(
    ctx,
    async (db) =>
      (await db.get<{ claimed_by: string | null }>('SELECT claimed_by FROM runs WHERE id = ?', runId))
        ?.claimed_by,
  );
  const executor = ctx.replicas.find((r) => r.id === claimedBy) ?? ctx.replicas[0]!;
  const streamer = ctx.replicas.find((r) => r !== executor)!;
  let stream = openAfterCut ? null : follow(ctx, streamer, runId!);
  let cut = false;
  let listenBackMs: number | null = null;
  if (leadMs !== null) {
    await sleep(Math.max(0, askedAt + ctx.modelDelay.baseMs - leadMs - Date.now()));
    const cutAt = Date.now();
    const pid = await cutListener(ctx, streamer);
    cut = pid !== null;
    stream ??= follow(ctx, streamer, runId!);
    ctx.log(
      `listen: ${streamer.id}'s LISTEN backend ${pid ?? '(not found)'} ended ${leadMs} ms before the answer`,
    );
    if (pid !== null) listenBackMs = await listenAgain(ctx, streamer, pid, cutAt);
  }
  const got = await (stream ?? follow(ctx, streamer, runId!));
  const stored = await withDb(ctx, (db) =>
    db.all<{ seq: number; type: string; at: number }>(
      'SELECT seq, type, at FROM run_events WHERE run_id = ? ORDER BY seq',
      runId,
    ),
  );
  const finished = stored.find((e) => e.type === 'run_finished');
  const through = stored.filter((e) => !finished || e.seq <= finished.seq);
  const finishedReceipt = got.events.find((e) => e.type === 'run_finished');
  return {
    ...spec,
    executor: executor.id,
    streamer: streamer.id,
    cut,
    stored: through.length,
    received: through.filter((e) => got.events.some((g) => g.seq === e.seq)).length,
    gotFinished: finishedReceipt !== undefined,
    closed: got.closedAt !== null,
    finishedAfterMs: finished && finishedReceipt ? finishedReceipt.at - finished.at : null,
    closedAfterMs: finished && got.closedAt !== null ? got.closedAt - finished.at : null,
    listenBackMs,
  };
}

interface Followed {
  events: { seq: number; type: string; at: number }[];
  /** Date.now() when the stream ended; null when the drill gave up on it. */
  closedAt: number | null;
}

/** Reads the run's event stream from `via` until it closes (or STREAM_WAIT_MS after run_finished). */
async function follow(ctx: DrillContext, via: Replica, runId: string): Promise<Followed> {
  const out: Followed = { events: [], closedAt: null };
  const ac = new AbortController();
  let giveUp: NodeJS.Timeout | null = null;
  const limit = () => {
    giveUp ??= setTimeout(() => ac.abort(), STREAM_WAIT_MS);
  };
  // Also bounded when run_finished never comes: the run itself waits for the model's answer.
  const outer = setTimeout(() => ac.abort(), ctx.modelDelay.baseMs + STREAM_WAIT_MS);
  try {
    const res = await fetch(`${via.url}/v1/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${ctx.tokens.admin}` },
      signal: ac.signal,
    });
    if (!res.ok || !res.body) throw new Error(`drill: events of ${runId} on ${via.id}: ${res.status}`);
    for await (const e of sseEvents(res.body)) {
      out.events.push({ seq: Number(e.id), type: e.event, at: Date.now() });
      if (e.event === 'run_finished') limit();
    }
    out.closedAt = Date.now();
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(outer);
    if (giveUp) clearTimeout(giveUp);
  }
  return out;
}

/** Ends `r`'s LISTEN backend; its pid, or null when none was found. */
async function cutListener(ctx: DrillContext, r: Replica): Promise<number | null> {
  return withDb(ctx, async (db) => {
    const b = (await listenBackends(db, [r])).get(r.id);
    if (!b) return null;
    await db.get('SELECT pg_terminate_backend(?)', b.pid);
    return b.pid;
  });
}

/** ms from `since` until `r` listens on a backend other than `oldPid` (null after 60 s). */
async function listenAgain(
  ctx: DrillContext,
  r: Replica,
  oldPid: number,
  since: number,
): Promise<number | null> {
  return withDb(ctx, async (db) => {
    while (Date.now() - since < 60_000) {
      const b = (await listenBackends(db, [r])).get(r.id);
      if (b && b.pid !== oldPid && b.listening) return Date.now() - since;
      await sleep(100);
    }
    return null;
  });
}
