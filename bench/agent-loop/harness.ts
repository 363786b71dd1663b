import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Sandbox } from '../../src/agent/sandbox.js';
import { systemClock } from '../../src/clock.js';
import { defaultConfig } from '../../src/config/load.js';
import type { RunEventMap, RunEventType } from '../../src/domain/events.js';
import type { Run, RunEvent } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import { findModel, type ModelSettings } from '../../src/models/catalogue.js';
import type { PlanDecisions } from '../../src/plans/decisions.js';
import { RUN_FINISHED, RunEvents } from '../../src/runs/events.js';
import type { RunQueue } from '../../src/runs/queue.js';
import type { RunService } from '../../src/runs/service.js';
import { buildServices } from '../../src/services.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { countingLogger } from '../shared/logger.js';
import { WORKSPACE_FILES } from './script.js';

// The drydock under test, built by the daemon's composition root (src/services.ts) and not started, so
// without the HTTP server and the scheduler: SqliteStore on a file, RunEvents, AgentRunner with the real
// SDK client, RunQueue. Two things are the bench's own: RunEvents is subclassed to timestamp the events that
// bound a turn, and the SDK client is given a fetch that timestamps each request (and hands over its body,
// for the bare replay).

/** A few small files; a git repository when git is at hand, so the plan records a commit as in real use. */
export function makeWorkspace(dir: string): 'git' | 'plain' {
  for (const [path, text] of Object.entries(WORKSPACE_FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], {
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
    });
  try {
    git('init', '-q');
    git('add', '-A');
    git('-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-qm', 'init');
    return 'git';
  } catch {
    return 'plain';
  }
}

/** Called with the request body and performance.now() each time the SDK calls fetch(). */
export type FetchHook = ((body: string, at: number) => void) | null;

/** The real SDK against the model server, with a fetch that reports each request to `hook.onFetch`. */
export function modelClient(url: string): { client: Anthropic; hook: { onFetch: FetchHook } } {
  const hook: { onFetch: FetchHook } = { onFetch: null };
  const timedFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    hook.onFetch?.(typeof init?.body === 'string' ? init.body : '', performance.now());
    return fetch(input, init);
  };
  const client = new Anthropic({
    apiKey: 'bench-key',
    baseURL: url,
    maxRetries: 0,
    timeout: 60_000,
    fetch: timedFetch,
  });
  return { client, hook };
}

/** Per run: performance.now() when run_started and each turn_finished were emitted. */
export interface TurnMarks {
  started: number;
  turnEnds: number[];
}

class TimedEvents extends RunEvents {
  readonly marks = new Map<string, TurnMarks>();

  mark(runId: string, type: RunEventType): void {
    if (type === 'run_started') this.marks.set(runId, { started: performance.now(), turnEnds: [] });
    else if (type === 'turn_finished') this.marks.get(runId)?.turnEnds.push(performance.now());
  }

  override emit<K extends RunEventType>(runId: string, type: K, data: RunEventMap[K]): Promise<RunEvent> {
    this.mark(runId, type);
    return super.emit(runId, type, data);
  }

  /** A run's executor writes through a fenced view (runs/events.ts): timestamped the same. */
  override fenced(...args: Parameters<RunEvents['fenced']>): RunEvents {
    const view = super.fenced(...args);
    const emit = view.emit.bind(view);
    view.emit = <K extends RunEventType>(runId: string, type: K, data: RunEventMap[K]) => {
      this.mark(runId, type);
      return emit(runId, type, data);
    };
    return view;
  }
}

export interface Settled {
  run: Run;
  submittedAt: number;
  settledAt: number;
}

export interface Drydock {
  store: SqliteStore;
  queue: RunQueue;
  /** Questions and tool approvals answered, plans decided, as a person would over HTTP. */
  runs: RunService;
  plans: PlanDecisions;
  marks: Map<string, TurnMarks>;
  hook: { onFetch: FetchHook };
  /** Log lines at warn or above so far (they are printed to stderr). */
  warnings(): number;
  createSession(workspace: string, turns: number): Promise<string>;
  createRun(sessionId: string, prompt: string): Promise<Run>;
  /** Submits the run to the queue; resolves when the queue reports it settled. */
  submit(run: Run): Promise<Settled>;
  /** Resolves the next time the queue reports run `id` settled (parked or ended); call before what resumes it. */
  settled(id: string): Promise<Settled>;
  close(): Promise<void>;
}

/** The model the runs ask for: the configured default (a catalogue model the SDK does not warn about). */
export const BENCH_MODEL = defaultConfig().anthropic.model;

export async function openDrydock(opts: {
  file: string;
  url: string;
  maxConcurrent: number;
  /** `models:` of the configuration (e.g. a catalogue fact overridden to measure without it). */
  models?: Record<string, ModelSettings>;
}): Promise<Drydock> {
  const base = defaultConfig();
  const config = {
    ...base,
    data_dir: dirname(opts.file),
    anthropic: { ...base.anthropic, model: BENCH_MODEL },
    models: { ...base.models, ...opts.models },
  };
  if (!findModel(config, BENCH_MODEL).priced) throw new Error(`bench: no price for ${BENCH_MODEL}`);
  const clock = systemClock;
  const { logger, counts: logged } = countingLogger();
  const store = new SqliteStore({ file: opts.file });
  const events = new TimedEvents(store, clock);
  const { client: model, hook } = modelClient(opts.url);
  const waiting = new Map<string, { submittedAt: number; resolve: (s: Settled) => void }>();
  const { queue, runs, plans } = await buildServices({
    config,
    logger,
    store,
    clock,
    events,
    model,
    sandbox: new Sandbox({ setting: config.execute.sandbox, hidden: [config.data_dir] }),
    maxConcurrent: opts.maxConcurrent,
    onRunSettled: (run) => {
      const settledAt = performance.now();
      const w = waiting.get(run.id);
      if (!w) return;
      waiting.delete(run.id);
      w.resolve({ run, submittedAt: w.submittedAt, settledAt });
    },
  });
  const settled = (id: string) =>
    new Promise<Settled>((resolve) => {
      waiting.set(id, { submittedAt: performance.now(), resolve });
    });
  return {
    store,
    queue,
    runs,
    plans,
    settled,
    marks: events.marks,
    hook,
    warnings: () => logged.warnings,
    async createSession(workspace, turns) {
      const session = await store.createSession({
        id: newId('ses'),
        name: `bench-${Math.random().toString(36).slice(2, 8)}`,
        workspace,
        owner: 'bench',
        // Neither limit may end a run early: every run makes exactly `turns` turns.
        defaults: { max_turns: turns + 5, budget_usd: 1_000 },
        createdAt: clock.now(),
      });
      return session.id;
    },
    createRun(sessionId, prompt) {
      return store.createRun({
        id: newId('run'),
        sessionId,
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt,
        requestedBy: 'bench',
        createdAt: clock.now(),
      });
    },
    submit(run) {
      const done = settled(run.id);
      queue.submit(run);
      return done;
    },
    async close() {
      await queue.drain(5_000);
      await store.close();
    },
  };
}

export interface BareSample {
  /** messages.stream(params) to finalMessage() resolved. */
  total: number;
  /** messages.stream(params) to fetch(). */
  prep: number;
  /** fetch() to finalMessage() resolved. */
  wire: number;
}

/**
 * One bare SDK round trip, consumed the way the agent loop consumes it (iterate the events, then
 * finalMessage), with nothing done per event. With a hook (one request at a time only), also the split at
 * the fetch() call.
 */
export async function bareRoundTrip(
  client: Anthropic,
  params: Anthropic.MessageCreateParamsNonStreaming,
  hook?: { onFetch: FetchHook },
): Promise<BareSample> {
  let fetchAt = Number.NaN;
  if (hook) {
    hook.onFetch = (_body, at) => {
      fetchAt = at;
    };
  }
  const t0 = performance.now();
  const stream = client.messages.stream(params);
  let n = 0;
  for await (const ev of stream) if (ev.type === 'content_block_delta') n += 1;
  const message = await stream.finalMessage();
  const t1 = performance.now();
  if (hook) hook.onFetch = null;
  if (n === 0 || message.content.length === 0) throw new Error('bare SDK: an empty answer');
  return { total: t1 - t0, prep: fetchAt - t0, wire: t1 - fetchAt };
}

/** A captured request body as the SDK's params (the SDK adds `stream: true` itself). */
export function paramsOf(body: string): Anthropic.MessageCreateParamsNonStreaming {
  const params = JSON.parse(body) as Anthropic.MessageCreateParamsNonStreaming & { stream?: boolean };
  delete params.stream;
  return params;
}

export interface RunCheck {
  problem: string | null;
  events: number;
  textDeltas: number;
}

/**
 * What a finished run must look like: planned after exactly `turns` turns, its conversation complete, and
 * its event log numbered 1..n without gaps, from run_started to the run_finished receipt.
 */
export async function checkRun(store: SqliteStore, run: Run, turns: number): Promise<RunCheck> {
  const events = await store.listEvents(run.id, 0, 1_000_000);
  const count = (type: string) => events.filter((e) => e.type === type).length;
  // On the 5.5 models the narration before each tool call comes back as (summarized) thinking.
  const textDeltas = count('text_delta') + count('thinking_delta');
  const bad = (problem: string): RunCheck => ({
    problem: `${run.id}: ${problem}`,
    events: events.length,
    textDeltas,
  });
  if (run.status !== 'planned') return bad(`ended ${run.status}${run.error ? ` (${run.error})` : ''}`);
  if (run.turns !== turns) return bad(`${run.turns} turns instead of ${turns}`);
  if (!events.every((e, i) => e.seq === i + 1)) return bad('event numbers have gaps');
  if (events[0]?.type !== 'run_started') return bad(`the log starts with ${events[0]?.type ?? 'nothing'}`);
  const last = events.at(-1)!;
  if (last.type !== RUN_FINISHED) return bad(`the log ends with ${last.type}, not ${RUN_FINISHED}`);
  if (last.data.status !== 'planned' || last.data.turns !== turns) return bad('run_finished disagrees');
  const expect: [string, number][] = [
    ['turn_finished', turns],
    ['tool_use', turns - 1],
    ['tool_result', turns - 1],
    ['plan_proposed', 1],
    [RUN_FINISHED, 1],
  ];
  for (const [type, n] of expect) {
    if (count(type) !== n) return bad(`${count(type)} ${type} events instead of ${n}`);
  }
  if (textDeltas < turns) return bad(`only ${textDeltas} text_delta and thinking_delta events`);
  const messages = await store.loadConversation(run.conversationId ?? run.id);
  if (messages.length !== 2 * turns + 1) {
    return bad(`${messages.length} conversation messages instead of ${2 * turns + 1}`);
  }
  if (!run.planId || !(await store.getPlan(run.planId))) return bad('no plan record');
  return { problem: null, events: events.length, textDeltas };
}
