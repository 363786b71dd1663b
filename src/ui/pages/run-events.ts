import { streamSSE } from 'hono/streaming';
import { presentEvent } from '../../http/present.js';
import { tailEvents } from '../../runs/tail.js';
import type { UiContext } from './page-context.js';

/**
 * GET /ui/runs/:id/events: the run's event log as Server-Sent Events for the page's EventSource
 * (cookie-authenticated, unlike /v1). Every frame is an unnamed `message` whose JSON names its type, so
 * the page hears event types it does not know yet. `id:` is the sequence number: a reconnecting
 * EventSource sends Last-Event-ID and gets only what it missed. The stream ends after run_finished.
 */
export function runEventRoutes({ app, deps, guard }: UiContext): void {
  const { store } = deps;

  app.get('/runs/:id/events', guard, async (c) => {
    const id = c.req.param('id');
    if (!(await store.getRun(id))) return c.text('no such run', 404);
    const from = Number(c.req.header('last-event-id') ?? '0');
    const after = Number.isSafeInteger(from) && from > 0 ? from : 0;

    return streamSSE(c, (stream) =>
      tailEvents(
        deps,
        id,
        after,
        {
          event: (e) => stream.writeSSE({ id: String(e.seq), data: JSON.stringify(presentEvent(e)) }),
          keepAlive: () => stream.write(': keep-alive\n\n'),
          // No receipt is coming: tell the page to stop rather than let EventSource reconnect.
          ended: () => stream.writeSSE({ event: 'end', data: '{}' }),
          onAbort: (listener) => stream.onAbort(listener),
        },
        'stop',
      ),
    );
  });
}
