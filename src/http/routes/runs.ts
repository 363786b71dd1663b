import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { DomainError } from '../../domain/errors.js';
import { tailEvents } from '../../runs/tail.js';
import { workRoot } from '../../workspace/paths.js';
import { type ResultDiff, readResultDiff } from '../../workspace/result-diff.js';
import { requires } from '../auth.js';
import { query } from '../body.js';
import { type DiffJson, listRunsQuery } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import { iso, presentEvent, presentRun } from '../present.js';

export function runRoutes(deps: AppDeps): Hono<Env> {
  const { store } = deps;
  const app = new Hono<Env>();

  app.get('/', async (c) => {
    const q = query(c, listRunsQuery);
    const page = await store.listRuns({
      sessionId: q.session_id,
      jobId: q.job_id,
      status: q.status,
      limit: q.limit,
      cursor: q.cursor,
    });
    return c.json({ items: page.items.map(presentRun), next_cursor: page.nextCursor });
  });

  app.get('/:id', async (c) => {
    const run = await store.getRun(c.req.param('id'));
    if (!run) throw notFound('run', c.req.param('id'));
    const waiting = await deps.runs.waitingOn(run);
    // A wait's end is a time, shown as ISO like every time of the API (the contract's `until`).
    const shown = waiting && 'until' in waiting ? { ...waiting, until: iso(waiting.until)! } : waiting;
    return c.json({ ...presentRun(run), waiting_on: shown });
  });

  /** The account's spend limit was raised: every run waiting on it goes on (docs/models.md). */
  app.post('/resume', requires('admin'), async (c) => {
    const resumed = await deps.runs.resumeSpendLimited(c.get('identity').identity);
    return c.json({ resumed: resumed.map(presentRun) });
  });

  app.post('/:id/cancel', requires('operate'), async (c) => {
    const id = c.req.param('id');
    const run = await store.getRun(id);
    if (!run) throw notFound('run', id);
    if (!(await deps.runs.cancel(id))) {
      const now = await store.getRun(id);
      throw new DomainError('conflict', `run ${id} already ended (${now?.status})`);
    }
    return c.json(presentRun((await store.getRun(id))!));
  });

  /**
   * An execute run's result as a unified diff (the plan's commit to the execution's commit), in JSON with its
   * files counted; `state` says why there is no diff text (see presentDiff). 409 for a planning run.
   */
  app.get('/:id/diff', async (c) => {
    const id = c.req.param('id');
    const run = await store.getRun(id);
    if (!run) throw notFound('run', id);
    const diff = await readResultDiff({ store, workRoot: workRoot(deps.config) }, run);
    if (diff.state === 'not_execution') throw new HttpError(409, 'not_an_execution', diff.reason);
    return c.json(presentDiff(diff));
  });

  app.get('/:id/events', (c) => eventStream(c, deps, c.req.param('id')));

  return app;
}

/**
 * The run's event log as Server-Sent Events: `id:` is the sequence number. Replays what comes after
 * Last-Event-ID (or ?after=), then follows live, and closes after the run_finished event.
 */
async function eventStream(c: Context<Env>, deps: AppDeps, id: string): Promise<Response> {
  const { store } = deps;
  const run = await store.getRun(id);
  if (!run) throw notFound('run', id);
  const from = c.req.header('last-event-id') ?? c.req.query('after') ?? '0';
  const after = Number(from);
  if (!Number.isSafeInteger(after) || after < 0) {
    throw new HttpError(400, 'bad_event_id', `Last-Event-ID must be a sequence number, got "${from}"`);
  }
  return streamSSE(c, (stream) =>
    tailEvents(
      deps,
      id,
      after,
      {
        event: (e) =>
          stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(presentEvent(e)) }),
        keepAlive: () => stream.write(': keep-alive\n\n'),
        // The client reads the run's status itself when the stream closes without a receipt.
        ended: async () => {},
        onAbort: (listener) => stream.onAbort(listener),
      },
      'replay',
    ),
  );
}

/**
 * `state`: ready (diff holds the text, maybe cut: see truncated), no_changes, pending (no commit yet, or the
 * execution failed before one), not_git (the workspace is no repository: changed in place), unavailable
 * (commit or repository gone, e.g. after retention); `reason` says it in words for every state but ready.
 */
export function presentDiff(d: Exclude<ResultDiff, { state: 'not_execution' }>): DiffJson {
  return {
    run_id: d.runId,
    plan_id: d.planId,
    state: d.state,
    reason: d.state === 'ready' ? null : d.reason,
    branch: d.branch,
    base_commit: d.base,
    commit: d.commit,
    files:
      d.state === 'ready'
        ? d.files.map((f) => ({
            path: f.path,
            old_path: f.oldPath,
            additions: f.additions,
            deletions: f.deletions,
            binary: f.binary,
          }))
        : [],
    shown_files: d.state === 'ready' ? d.shownFiles : 0,
    truncated: d.state === 'ready' ? d.truncated : null,
    diff: d.state === 'ready' ? d.diff : null,
  };
}
