import { streamSSE } from 'hono/streaming';
import { isFinishedRunStatus, type RunEvent } from '../../domain/types.js';
import { presentEvent } from '../../http/present.js';
import { RUN_FINISHED } from '../../runs/events.js';
import type { UiContext } from './context.js';

const PAGE = 500;

/**
 * GET /ui/runs/:id/events: the run's event log as Server-Sent Events for the page's EventSource
 * (cookie-authenticated, unlike /v1). Every frame is an unnamed `message` whose JSON names its type, so
 * the page hears event types it does not know yet. `id:` is the sequence number: a reconnecting
 * EventSource sends Last-Event-ID and gets only what it missed. The stream ends after run_finished.
 */
export function runEventRoutes({ app, deps, guard }: UiContext): void {
  const { store, events } = deps;

  app.get('/runs/:id/events', guard, async (c) => {
    const id = c.req.param('id');
    if (!(await store.getRun(id))) return c.text('no such run', 404);
    const from = Number(c.req.header('last-event-id') ?? '0');
    const after = Number.isSafeInteger(from) && from > 0 ? from : 0;

    return streamSSE(c, async (stream) => {
      let last = after;
      let done = false;
      const live: RunEvent[] = [];
      let wake: (() => void) | null = null;
      // Subscribe before replaying the stored log, so nothing falls between the two; seq skips repeats.
      const unsubscribe = events.subscribe(id, (e) => {
        live.push(e);
        wake?.();
      });
      stream.onAbort(() => {
        done = true;
        wake?.();
      });
      const send = async (e: RunEvent) => {
        if (e.seq <= last || done) return;
        last = e.seq;
        await stream.writeSSE({ id: String(e.seq), data: JSON.stringify(presentEvent(e)) });
        if (e.type === RUN_FINISHED) done = true;
      };
      try {
        for (;;) {
          const page = await store.listEvents(id, last, PAGE);
          for (const e of page) await send(e);
          if (page.length < PAGE || done) break;
        }
        while (!done) {
          if (!live.length) {
            // An ended run writes its receipt right after its status changes: wait a little for it.
            const ended = isFinishedRunStatus((await store.getRun(id))?.status ?? 'failed');
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, ended ? 2_000 : 15_000);
              wake = () => {
                clearTimeout(t);
                resolve();
              };
            });
            wake = null;
            if (!live.length && !done) {
              if (ended) {
                // No receipt is coming: tell the page to stop rather than let EventSource reconnect.
                await stream.writeSSE({ event: 'end', data: '{}' });
                break;
              }
              await stream.write(': keep-alive\n\n'); // keeps proxies from closing an idle stream
            }
          }
          for (const e of live.splice(0)) await send(e);
        }
      } finally {
        unsubscribe();
      }
    });
  });
}
