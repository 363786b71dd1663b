import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OutboxStore, StateStore, Store } from '../store/store.js';

/**
 * The daemon's Prometheus metrics. Things that happen in this process (fires, lateness, HTTP requests) are
 * counted as they happen; totals that live in the store (runs, plans, deliveries, tokens, cost) are read
 * from it at scrape time, so they survive restarts and agree with the API.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly fires = new Counter({
    name: 'drydock_scheduler_fires_total',
    help: 'Cron slots handled by this process, by outcome (fired, pending, coalesced, missed, skipped, canceled, capped: a spend cap stopped it)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly spendCaps = new Counter({
    name: 'drydock_spend_caps_reached_total',
    help: 'Spend caps reached, once per scope and day across replicas (the replica that noted it first counts it), by scope (trigger, session, global) and cap (daily_usd, daily_runs)',
    labelNames: ['scope', 'cap'] as const,
    registers: [this.registry],
  });
  readonly lateness = new Histogram({
    name: 'drydock_scheduler_lateness_seconds',
    help: 'How long after its jittered due time a slot fired',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 15, 60],
    registers: [this.registry],
  });
  readonly deliveryWait = new Histogram({
    name: 'drydock_delivery_wait_seconds',
    help: 'How long a webhook delivery waited in the inbox between its answer and its processing',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  readonly gcRemoved = new Counter({
    name: 'drydock_gc_removed_total',
    help: 'Worktrees (with their local branches) and pull request checkouts removed by retention',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly planDeliveries = new Counter({
    name: 'drydock_deliveries_total',
    help: "Attempts to deliver an executed plan's result (push, pull request), by outcome: delivered, retry (failed, tried again later), failed (attempts used up)",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly notifications = new Counter({
    name: 'drydock_notifications_total',
    help: 'Outbound notification attempts by event and outcome (delivered, retried, failed)',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly modelErrors = new Counter({
    name: 'drydock_model_errors_total',
    help: "Failed Messages API requests as a run saw them (after the SDK's own retries), by kind: spend_limit, auth, permission, rate_limit, overloaded, invalid_request, not_found, request_too_large, api_error, timeout, connection, unexpected",
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly http = new Histogram({
    name: 'drydock_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  /** The histogram's series by "method route status": prom-client hashes the labels on every call otherwise. */
  private readonly httpSeries = new Map<string, { observe(seconds: number): void }>();

  /** Records one HTTP request's latency under its method, matched route pattern and status. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let series = this.httpSeries.get(key);
    if (!series) {
      series = this.http.labels({ method, route, status: String(status) });
      this.httpSeries.set(key, series);
    }
    series.observe(seconds);
  }

  constructor(store: OutboxStore & StateStore) {
    const registry = this.registry;
    const fromStore = <K extends string>(
      name: string,
      help: string,
      labelNames: readonly K[],
      read: (g: Gauge<K>) => Promise<void>,
    ) =>
      new Gauge<K>({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          await read(this);
        },
      });
    let cached: { at: number; stats: Awaited<ReturnType<Store['stats']>> } | null = null;
    // One store read per scrape, shared by the gauges below.
    const stats = async () => {
      if (!cached || Date.now() - cached.at > 1_000) cached = { at: Date.now(), stats: await store.stats() };
      return cached.stats;
    };
    const setAll = (g: Gauge<string>, label: string, values: Record<string, number>) => {
      g.reset();
      for (const [k, v] of Object.entries(values)) g.set({ [label]: k }, v);
    };
    fromStore('drydock_runs', 'Runs in the store by phase and status', ['status'], async (g) =>
      setAll(g as Gauge<string>, 'status', (await stats()).runsByStatus),
    );
    fromStore(
      'drydock_plans',
      'Plans in the store by status (pending_approval is the queue depth)',
      ['status'],
      async (g) => setAll(g as Gauge<string>, 'status', (await stats()).plansByStatus),
    );
    fromStore(
      'drydock_deliveries',
      'Webhook deliveries and fires received, by outcome',
      ['outcome'],
      async (g) => setAll(g as Gauge<string>, 'outcome', (await stats()).deliveriesByOutcome),
    );
    fromStore('drydock_job_slots', 'Cron slots recorded, by outcome', ['outcome'], async (g) =>
      setAll(g as Gauge<string>, 'outcome', (await stats()).slotsByOutcome),
    );
    fromStore('drydock_tokens', 'Model tokens used by all runs, by kind', ['kind'], async (g) =>
      setAll(g as Gauge<string>, 'kind', (await stats()).tokens),
    );
    fromStore(
      'drydock_cost_usd',
      'USD spent by all runs, priced from the configured table',
      [],
      async (g) => {
        g.set((await stats()).costUsd);
      },
    );
    fromStore(
      'drydock_waiting',
      'What waits for a person: questions, tool approvals, plans',
      ['kind'],
      async (g) => {
        const s = await stats();
        g.set({ kind: 'question' }, s.pendingQuestions);
        g.set({ kind: 'tool_approval' }, s.pendingToolApprovals);
        g.set({ kind: 'plan' }, s.plansByStatus.pending_approval ?? 0);
      },
    );
    fromStore('drydock_active_jobs', 'Active cron jobs', [], async (g) => {
      g.set((await stats()).activeJobs);
    });
    fromStore(
      'drydock_notification_outbox',
      'Outbound notifications in the outbox by status (pending is the depth still to send)',
      ['status'],
      async (g) => setAll(g as Gauge<string>, 'status', await store.countNotifications()),
    );
  }
}
