import { pause } from '../clock.js';
import type { ConversationMessage, Plan } from '../domain/types.js';
import { type Fence, FencedError, type Store, StoreUnavailableError } from '../store/store.js';

/** How long a run's store calls wait for the database to answer again before the run is given up (wall time). */
export const OUTAGE_WAIT_MS = 60_000;

/** The writes an executor makes on behalf of the run it holds: each carries the run's fence. */
type FencedWrites =
  | 'appendEvent'
  | 'appendMessages'
  | 'saveFrame'
  | 'updateRun'
  | 'createPlan'
  | 'transitionPlan'
  | 'startToolCall'
  | 'recordToolCallProcess'
  | 'finishToolCall'
  | 'createQuestion'
  | 'createToolApproval'
  | 'confirmHold';

export interface Hold {
  fence: Fence;
  /** Aborted when the run's work must stop (canceled, the daemon stopping, the claim lost). */
  signal: AbortSignal;
  /** Called once a write found the claim gone (FencedError): the run's work stops at once. */
  lost(err: FencedError): void;
}

/**
 * The store as the executor of a claimed run sees it:
 * - every write made on behalf of the run carries its fence, so a process that lost the run (paused past its
 *   lease, replaced by a restart) writes nothing more; the first write that finds the claim gone calls
 *   `lost`, which stops the run's work (the model request, the command's process group);
 * - every call rides out a database outage: it is tried again with a growing wait while the database cannot
 *   be reached, for up to OUTAGE_WAIT_MS, so a fast restart of the database redoes nothing. Longer, the
 *   error stands and the run is taken over once the database answers (RunQueue.carryOut). Leases keep
 *   counting meanwhile (renewals fail too): after an outage longer than the lease, another replica may take
 *   the run over, and then this writer's next write is refused.
 *
 * A call whose transaction was cut just as its COMMIT was sent may have been applied. Before such a write is
 * tried again, what it writes is looked for: a plan, question or tool approval by its id, a conversation
 * message at the conversation's end (stored twice, a reply would repeat its tool_use ids, which the Messages
 * API refuses); the call journal finds its first insert itself. An event may be logged twice (a window of one
 * round trip, at the moment the database goes away).
 */
export function holdingStore(store: Store, hold: Hold): Store {
  const { fence } = hold;
  const fenced: Pick<Store, FencedWrites> = {
    appendEvent: (runId, type, data, at) => store.appendEvent(runId, type, data, at, fence),
    appendMessages: (conversationId, runId, messages, now) =>
      store.appendMessages(conversationId, runId, messages, now, fence),
    saveFrame: (conversationId, runId, frame, now) =>
      store.saveFrame(conversationId, runId, frame, now, fence),
    updateRun: (id, patch) => store.updateRun(id, patch, fence),
    createPlan: (plan) => store.createPlan(plan, fence),
    transitionPlan: (id, from, to, fields) => store.transitionPlan(id, from, to, fields, fence),
    startToolCall: (call) => store.startToolCall(call, fence),
    recordToolCallProcess: (runId, toolUseId, group, start) =>
      store.recordToolCallProcess(runId, toolUseId, group, start, fence),
    finishToolCall: (runId, toolUseId, result, now) =>
      store.finishToolCall(runId, toolUseId, result, now, fence),
    createQuestion: (q) => store.createQuestion(q, fence),
    createToolApproval: (a) => store.createToolApproval(a, fence),
    confirmHold: (runId) => store.confirmHold(runId, fence),
  };
  /** Whether a write that may have been applied was: its result then (see above); null to try it again. */
  const applied: Partial<Record<FencedWrites, (...args: never[]) => Promise<{ value: unknown } | null>>> = {
    createPlan: async (plan: Plan) => found(await store.getPlan(plan.id)),
    createQuestion: async (q: { id: string }) => found(await store.getQuestion(q.id)),
    createToolApproval: async (a: { id: string }) => found(await store.getToolApproval(a.id)),
    appendMessages: async (conversationId: string, _runId: string, messages: ConversationMessage[]) => {
      const last = (await store.loadConversation(conversationId)).at(-1);
      const m = messages.at(-1);
      if (!last || !m || last.role !== m.role) return null;
      const tail = last.content.slice(-m.content.length);
      return JSON.stringify(tail) === JSON.stringify(m.content) ? { value: undefined } : null;
    },
  };
  const guarded = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const own = key in fenced ? fenced[key as FencedWrites] : Reflect.get(target, key, target);
      if (typeof own !== 'function') return own;
      let call = guarded.get(key);
      if (!call) {
        const fn = own as (...args: unknown[]) => unknown;
        const check = applied[key as FencedWrites] as
          | ((...args: unknown[]) => Promise<{ value: unknown } | null>)
          | undefined;
        call = (...args: unknown[]) => {
          const first = fn.apply(target, args);
          // Synchronous members (onWake) are passed through as they are.
          if (!(first instanceof Promise)) return first;
          return settle(first, async () => {
            const done = check ? await check(...args) : null;
            return done ? done.value : (fn.apply(target, args) as Promise<unknown>);
          });
        };
        guarded.set(key, call);
      }
      return call;
    },
  });

  async function settle<T>(first: Promise<T>, again: () => Promise<T>): Promise<T> {
    try {
      return await rideOutOutage(
        (n) => (n === 0 ? first : again()),
        () => !hold.signal.aborted,
        hold.signal,
      );
    } catch (err) {
      if (err instanceof FencedError) hold.lost(err);
      throw err;
    }
  }
}

const NEVER = new AbortController().signal;

/**
 * `attempt(n)` (n counts the tries from 0), tried again while the database cannot be reached
 * (StoreUnavailableError), with a wait growing to 2 s, for up to OUTAGE_WAIT_MS of wall time, while `going()`
 * says so and `signal` has not aborted (it also cuts a wait short); then the error stands. Any other error at
 * once.
 */
export async function rideOutOutage<T>(
  attempt: (n: number) => Promise<T>,
  going: () => boolean,
  signal: AbortSignal = NEVER,
): Promise<T> {
  const started = performance.now();
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof StoreUnavailableError) || !going()) throw err;
      if (performance.now() - started > OUTAGE_WAIT_MS) throw err;
      await pause(Math.min(100 * 2 ** n, 2_000), signal);
      if (signal.aborted) throw err;
    }
  }
}

function found(row: unknown): { value: unknown } | null {
  return row === null || row === undefined ? null : { value: row };
}
