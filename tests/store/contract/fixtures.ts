import { afterEach, beforeEach } from 'vitest';
import type { Plan, Run, Session, Trigger, WebhookDelivery } from '../../../src/domain/types.js';
import type { NewJob, NewRun, NewSession, Store } from '../../../src/store/store.js';

// What every contract file shares: the store under test, fresh for each test, and small builders of the
// records the Store takes. Times are fixed epoch values (the store is never asked for the wall clock).

/** A store under test, migrated and empty. */
export interface StoreUnderTest {
  store: Store;
  /** Closes `store` and removes its database. */
  close(): Promise<void>;
  /**
   * Another Store on the same database, as a second process would open it: the races of the contract run
   * their two sides on `store` and on this one. The contract closes it before `close`. Without it, both
   * sides of a race share `store`.
   */
  open?(): Promise<Store>;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

export interface StoreContext {
  /** This test's store. */
  readonly store: Store;
  /** A second store on this test's database (closed after the test). */
  peer(): Promise<Store>;
}

/** Registers hooks that give each test of the enclosing describe block a fresh store. */
export function useStore(factory: StoreFactory): StoreContext {
  let current: StoreUnderTest | null = null;
  const peers: Store[] = [];
  beforeEach(async () => {
    current = await factory();
  });
  afterEach(async () => {
    for (const p of peers.splice(0)) await p.close();
    const done = current;
    current = null;
    await done?.close();
  });
  const live = (): StoreUnderTest => {
    if (!current) throw new Error('store contract: the store is used outside a test');
    return current;
  };
  return {
    get store() {
      return live().store;
    },
    async peer() {
      const c = live();
      if (!c.open) return c.store;
      const s = await c.open();
      peers.push(s);
      return s;
    },
  };
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** A Monday, 09:00:00 UTC: the contract's "now". */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

export const sessionInput = (id: string, over: Partial<NewSession> = {}): NewSession => ({
  id,
  name: `session ${id}`,
  workspace: '/srv/repo',
  owner: 'alice',
  defaults: {},
  createdAt: T0,
  ...over,
});

/** A recurring "around 9" job whose next slot is tomorrow 09:00, due 09:04. */
export const jobInput = (id: string, sessionId: string, over: Partial<NewJob> = {}): NewJob => ({
  id,
  sessionId,
  name: null,
  cron: '0 9 * * *',
  effectiveCron: '4 9 * * *',
  timezone: 'UTC',
  prompt: `prompt of ${id}`,
  recurring: true,
  approximate: true,
  options: {},
  createdBy: 'alice',
  createdAt: T0,
  expiresAt: T0 + 7 * DAY,
  nextNominalAt: T0 + DAY,
  nextDueAt: T0 + DAY + 4 * MINUTE,
  nextFinal: false,
  overlap: 'buffer_one',
  jitterMaxSeconds: null,
  ...over,
});

export const runInput = (id: string, sessionId: string, over: Partial<NewRun> = {}): NewRun => ({
  id,
  sessionId,
  jobId: null,
  slotAt: null,
  source: 'manual',
  prompt: `prompt of ${id}`,
  requestedBy: 'alice',
  createdAt: T0,
  ...over,
});

export const planInput = (
  id: string,
  run: Pick<Run, 'id' | 'sessionId'>,
  over: Partial<Plan> = {},
): Plan => ({
  id,
  runId: run.id,
  sessionId: run.sessionId,
  conversationId: run.id,
  toolUseId: `toolu_${id}`,
  markdown: `# Plan ${id}\n\nChange the thing.`,
  sha256: `sha-${id}`,
  workspaceCommit: null,
  status: 'pending_approval',
  round: 1,
  previousPlanId: null,
  requestedBy: 'alice',
  createdAt: T0,
  jobId: null,
  triggerId: null,
  source: 'manual',
  expiresAt: T0 + DAY,
  approvalsRequired: 1,
  allowSelfApproval: false,
  executeMode: 'manual',
  network: [],
  owner: 'alice',
  decidedAt: null,
  failureReason: null,
  subject: null,
  ...over,
});

export const triggerInput = (id: string, over: Partial<Trigger> = {}): Trigger => ({
  id,
  name: `trigger ${id}`,
  kind: 'github',
  events: ['pull_request.opened'],
  filters: {},
  prompt: 'Review {{pull_request}}',
  workspace: null,
  options: {},
  hourlyCap: 10,
  limits: {},
  tokenId: null,
  tokenHash: null,
  enabled: true,
  createdBy: 'admin',
  createdAt: T0,
  updatedAt: T0,
  ...over,
});

export const webhookDeliveryInput = (id: string, over: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
  id,
  source: 'github',
  key: `guid-${id}`,
  event: 'pull_request.opened',
  triggerId: null,
  outcome: 'queued',
  detail: null,
  subject: null,
  runIds: [],
  receivedAt: T0,
  processedAt: null,
  ...over,
});

export async function givenSession(
  store: Store,
  id = 'ses_1',
  over: Partial<NewSession> = {},
): Promise<Session> {
  return store.createSession(sessionInput(id, over));
}

/** A run in session `over.sessionId` (default ses_1), made first if it does not exist. */
export async function givenRun(store: Store, id: string, over: Partial<NewRun> = {}): Promise<Run> {
  const sessionId = over.sessionId ?? 'ses_1';
  if (!(await store.getSession(sessionId))) await givenSession(store, sessionId);
  return store.createRun(runInput(id, sessionId, { ...over, sessionId }));
}

/** A plan proposed by a run of its own (`run_<plan id>`). */
export async function givenPlan(
  store: Store,
  id: string,
  over: Partial<Plan> = {},
  runOver: Partial<NewRun> = {},
): Promise<Plan> {
  const sessionId = over.sessionId ?? runOver.sessionId ?? 'ses_1';
  const run = await givenRun(store, `run_${id}`, { ...runOver, sessionId });
  return store.createPlan(planInput(id, run, over));
}

/** The values of the settled promises that were fulfilled. */
export function fulfilled<T>(results: PromiseSettledResult<T>[]): T[] {
  return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
}

/** Every page of a keyset-paginated listing, in order. */
export async function allPages<T>(
  list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await list(cursor);
    pages.push(page.items);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error('store contract: a listing never ended');
}

/** A cursor no store issued (its text has no time part). */
export const FOREIGN_CURSOR = Buffer.from('nope').toString('base64url');
