import Anthropic from '@anthropic-ai/sdk';
import { defaultConfig } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import type { RunExecutor } from '../../src/runs/queue.js';
import { countingLogger } from '../shared/logger.js';
import { childParams, cpuMs, fail, maxRssBytes, onOrders, report } from './child-io.js';
import type { DaemonParams, DaemonUsage } from './protocol.js';

// Child: the real daemon, startDaemon() (store, run queue, scheduler, HTTP server) on the seeded data
// directory, a free loopback port and the real clock. Two things are not the defaults:
//   - the executor: a no-op that completes every run at once (startDaemon's `executor` option), so the
//     execute runs that approvals start pass through the real queue and store without an agent or a model
//     and cannot pile up work that skews the figures;
//   - the model client points at a closed local port (127.0.0.1:9); with that executor it is never called.
// The logger is pino at info, as in production, counting lines instead of writing them (warnings and
// errors go to stderr). The parent asks for CPU / run counters around each phase and stops it at the end.

const p = childParams<DaemonParams>();

let executed = 0;
const noop: RunExecutor = {
  async execute() {
    executed += 1;
    return { status: 'completed' };
  },
};

const { logger, counts: logged } = countingLogger();

async function main(): Promise<void> {
  const config = defaultConfig();
  config.data_dir = p.dataDir;
  config.timezone = 'UTC';
  config.log_level = 'info';
  config.server.host = '127.0.0.1';
  config.server.port = 0;
  config.server.shutdown_grace_ms = 5_000;
  config.admin_token = p.adminToken;
  const model = new Anthropic({ apiKey: 'bench-key', baseURL: 'http://127.0.0.1:9', maxRetries: 0 });

  const t0 = performance.now();
  const daemon = await startDaemon({ config, logger, model, executor: noop, announce: () => {} });
  const startMs = performance.now() - t0;

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
