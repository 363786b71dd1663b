import type { ModelConfig } from '../models/catalogue.js';
import { modelLifecycleWarnings } from '../models/catalogue.js';
import type { JobStore, SessionStore, TriggerStore } from '../store/store.js';

/** At most this many open sessions are looked at (a start must not wait on a huge table). */
const MAX_SESSIONS = 1_000;

/**
 * What the daemon says at start of the work stored on a model that has retired or retires within 30 days:
 * open sessions (their default), their active jobs and enabled triggers (their options). Each one's next
 * run would fail (retired) or soon will (retiring); the line names where to change it and the replacement.
 */
export async function storedModelWarnings(
  store: SessionStore & JobStore & TriggerStore,
  config: ModelConfig,
  now: number,
): Promise<string[]> {
  const lines: string[] = [];
  const say = (where: string, model: string | undefined) => {
    if (model === undefined) return;
    for (const w of modelLifecycleWarnings(config, model, now)) lines.push(`${where}: ${w}`);
  };
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await store.listSessions({ status: 'open', limit: 200, cursor });
    for (const session of page.items) {
      say(`session ${session.name} (${session.id})`, session.defaults.model);
      for (const job of await store.listJobs(session.id)) {
        if (job.status === 'active') say(`job ${job.id} of session ${session.name}`, job.options.model);
      }
    }
    seen += page.items.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && seen < MAX_SESSIONS);
  for (const trigger of await store.listTriggers({ enabled: true })) {
    say(`trigger ${trigger.name} (${trigger.id})`, trigger.options.model);
  }
  return lines;
}
