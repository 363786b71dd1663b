import { startModelServer } from '../../tests/support/model-server.js';
import { childParams, cpuMs, fail, report } from './child-io.js';
import type { ServerCommand, ServerParams } from './protocol.js';
import { turnResponse } from './script.js';

// Child: the zero-latency model. The scripted Messages API server of the tests (real HTTP, real SSE framing,
// request validation), in a process of its own so its work never runs on the measured event loop. Every
// request is answered at once from its body (see script.ts): no delay before the first byte, none between
// events.

const p = childParams<ServerParams>();

async function main(): Promise<void> {
  const server = await startModelServer();
  let served = 0;
  server.setFallback((req) => {
    served += 1;
    // The server records every request for the tests; here that would only grow the heap.
    if (server.requests.length > 256) server.requests.splice(0);
    return turnResponse(req.body, p.turns);
  });
  process.on('message', (m: ServerCommand) => {
    if (m.type === 'usage') {
      report({ type: 'usage', cpuMs: cpuMs(), served }).catch(fail);
    } else if (m.type === 'close') {
      server.close().then(() => process.exit(0), fail);
    }
  });
  // Gone with the orchestrator, whatever happened to it.
  process.on('disconnect', () => process.exit(0));
  await report({ type: 'listening', url: server.url });
}

main().catch(fail);
