import Anthropic from '@anthropic-ai/sdk';
import { systemClock } from '../../src/clock.js';
import { defaultConfig } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import type { Run } from '../../src/domain/types.js';
import { silentLogger } from '../../src/logger.js';
import { PlanLifecycle } from '../../src/plans/lifecycle.js';
import type { RunHandler } from '../../src/runs/queue.js';
import type { Store } from '../../src/store/store.js';
import { countingLogger } from '../shared/logger.js';
import { childParams, cpuMs, fail, maxRssBytes, onOrders, report } from './child-io.js';
import type { DaemonParams, DaemonUsage } from './protocol.js';

// Child: the real daemon, startDaemon() (store, run queue, scheduler, HTTP server) on the seeded data
// directory (or, with database_url, the PostgreSQL database holding its copy), a free loopback port and the
// real clock. Two things are not the defaults:
//   - the run handler: a no-op that completes every run at once (startDaemon's `handler` option), so the
//     execute runs that approvals start pass through the real queue and store without an agent or a model
//     and cannot pile up work that skews the figures. For an execute run it keeps the plan's books as the
//     execute phase does (PlanLifecycle.startExecution, then finishExecution once the "work" is done), so
//     the plan ends `executed`; a run that completed without recording its plan's result would rightly
//     have its plan failed by the daemon (ExecutionSettler);
//   - the model client points at a closed local port (127.0.0.1:9); with that executor it is never called.
// The logger is pino at info, as in production, counting lines instead of writing them (warnings and
// errors go to stderr). The parent asks for CPU / run counters around each phase and stops it at the end.

const p = childParams<DaemonParams>();

let executed = 0;
/** The daemon's store, once startDaemon has opened it; the executor records plan results through it. */
let resolveStore: (store: Store) => void = () => {};
const daemonStore = new Promise<Store>((resolve) => {
  resolveStore = resolve;
});
let lifecycle: Promise<PlanLifecycle> | null = null;

/** What the execute phase records around its work (src/agent/execute-phase.ts open / finish), no more. */
async function recordExecution(run: Run): Promise<string | null> {
  if (!run.executesPlanId) return null;
  lifecycle ??= daemonStore.then(
    (store) => new PlanLifecycle({ store, clock: systemClock, logger: silentLogger() }),
  );
  const plans = await lifecycle;
  if (!(await plans.startExecution(run.executesPlanId))) {
    return `plan ${run.executesPlanId} is not approved: nothing was executed`;
  }
  await plans.finishExecution(run.executesPlanId);
  return null;
}

const noop: RunHandler = {
  async execute(run) {
    executed += 1;
    const refused = await recordExecution(run);
    return refused ? { status: 'failed', error: refused } : { status: 'completed' };
  },
};

const { logger, counts: logged } = countingLogger();

async function main(): Promise<void> {
  const config = defaultConfig();
  config.data_dir = p.dataDir;
  config.database_url = p.databaseUrl;
  config.timezone = 'UTC';
  config.log_level = 'info';
  config.server.host = '127.0.0.1';
  config.server.port = 0;
  config.server.shutdown_grace_ms = 5_000;
  config.admin_token = p.adminToken;
  const model = new Anthropic({ apiKey: 'bench-key', baseURL: 'http://127.0.0.1:9', maxRetries: 0 });

  const t0 = performance.now();
  const daemon = await startDaemon({ config, logger, model, handler: noop, announce: () => {} });
  const startMs = performance.now() - t0;
  resolveStore(daemon.store);

  const usage = (): DaemonUsage => ({
    type: 'usage',
    cpuMs: cpuMs(),
    rss: process.memoryUsage.rss(),
    executed,
    active: daemon.queue.activeCount,
    warnings: logged.warnings,
    logLines: logged.lines,
  });
  onOrders<{ type: 'usage' | 'stop' }>(async (order) => {
    if (order.type === 'usage') {
      await report(usage());
      return;
    }
    await daemon.stop();
    await report({ type: 'stopped', usage: usage(), maxRss: maxRssBytes() });
    process.exit(0);
  });
  await report({ type: 'started', url: daemon.url, startMs, recovered: executed });
}

main().catch(fail);
