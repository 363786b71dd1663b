import type { SandboxStatus } from '../agent/sandbox.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { PlanDeliveryWorker } from '../delivery/worker.js';
import type { Run } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PlanDecisions } from '../plans/decisions.js';
import type { RunEvents } from '../runs/events.js';
import type { RunService } from '../runs/service.js';
import type { Jobs } from '../scheduler/jobs.js';
import type { Sessions } from '../sessions/service.js';
import type { Store } from '../store/store.js';
import type { TriggerAdmin } from '../triggers/admin.js';
import type { TriggerService } from '../triggers/service.js';
import type { HiddenPaths } from '../workspace/hidden.js';
import type { AuthVariables } from './auth.js';
import type { BodyBudget } from './body-budget.js';

/** What the HTTP app needs from the daemon; tests pass their own. */
export interface AppDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** The scheduler loop: woken when jobs change; its state is part of readiness. */
  scheduler: { kick(): void; readonly isRunning: boolean };
  /** Receives runs created by the API (run-now). */
  submitRun: (run: Run) => void;
  events: RunEvents;
  runs: RunService;
  plans: PlanDecisions;
  triggers: TriggerService;
  /** Creating and closing sessions. */
  sessions: Sessions;
  /** A session's cron jobs: create, pause, resume, renew, run now, delete. */
  jobs: Jobs;
  /** Creating, changing and deleting triggers (and a scheduled trigger's job). */
  triggerAdmin: TriggerAdmin;
  /** What no one sees through the model's tools; the tool approval page's previews read files through it too. */
  hidden: HiddenPaths;
  /** Prometheus metrics; /metrics answers 404 without them. */
  metrics?: Metrics;
  /** How the execute phase's commands run (shown on plans and by /readyz); unknown without it. */
  sandbox?: SandboxStatus;
  /** Whether the Messages API client has a key (default: whether anthropic.api_key is set). */
  modelConfigured?: boolean;
  /** This daemon's name among replicas (shown by /readyz); absent when unknown. */
  replica?: string;
  /**
   * Bytes of webhook bodies held before their signature is verified, shared by all requests; createApp makes
   * one of server.unauthenticated_body_budget_bytes when none is given (tests pass one to look into it).
   */
  unauthenticatedBodies?: BodyBudget;
  /** Delivery of executed plans (POST /v1/plans/:id/deliver); 503 without it. */
  delivery?: Pick<PlanDeliveryWorker, 'requestDelivery'>;
}

export type Env = { Variables: AuthVariables };
