import type { JobJson, SessionJson, TriggerJson, TriggerWithTokenJson } from '../../http/contract/index.js';
import type { ApiClient } from '../client.js';
import { idPath, queryString } from '../commands/request.js';
import { type Current, fileForm, managedSession } from './export.js';
import type { Change } from './plan.js';

// `drydock apply` and `drydock export` over the daemon's API, like every remote command: what the daemon
// holds read with GET requests, a plan carried out with POST, PATCH and DELETE, each as the caller's token
// allows.

/** The open sessions, each one's jobs, and the triggers. */
export async function readCurrent(client: ApiClient): Promise<Current> {
  const sessions: SessionJson[] = [];
  let cursor: string | undefined;
  do {
    const page = (
      await client.request('GET', `/v1/sessions${queryString({ status: 'open', limit: '200', cursor })}`)
    ).body as { items: SessionJson[]; next_cursor: string | null };
    sessions.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  const jobs = new Map<string, JobJson[]>();
  for (const s of sessions) {
    if (!managedSession(s)) continue;
    const list = (await client.request('GET', `/v1/sessions/${idPath(s.id)}/jobs`)).body as {
      items: JobJson[];
    };
    jobs.set(s.id, list.items);
  }
  const triggers = ((await client.request('GET', '/v1/triggers')).body as { items: TriggerJson[] }).items;
  return { sessions, jobs, triggers };
}

/** What carrying out one change printed besides its diff line: a generic trigger's token, shown once. */
export interface Carried {
  token?: { trigger: string; id: string; token: string };
}

/**
 * Makes the changes in their order; the ids of sessions made here are remembered for their jobs. Stops at
 * the first refusal (the API's error, as every command reports it).
 */
export async function carryOut(
  client: ApiClient,
  changes: Change[],
  each: (change: Change, carried: Carried) => void,
): Promise<void> {
  const made = new Map<string, string>();
  for (const change of changes) each(change, await carryOne(client, change, made));
}

async function carryOne(client: ApiClient, c: Change, made: Map<string, string>): Promise<Carried> {
  switch (c.op) {
    case 'create_session': {
      const { jobs: _jobs, ...body } = c.session;
      const s = (await client.request('POST', '/v1/sessions', fileForm(body))).body as SessionJson;
      made.set(c.session.name, s.id);
      return {};
    }
    case 'close_session':
      await client.request('DELETE', `/v1/sessions/${idPath(c.session.id)}`);
      return {};
    case 'create_job': {
      const sessionId = c.sessionId ?? made.get(c.session);
      await client.request('POST', `/v1/sessions/${idPath(sessionId ?? '')}/jobs`, c.job);
      return {};
    }
    case 'update_job':
      await client.request('PATCH', `/v1/jobs/${idPath(c.job.id)}`, patchOf(c.fields));
      return {};
    case 'delete_job':
      await client.request('DELETE', `/v1/jobs/${idPath(c.job.id)}`);
      return {};
    case 'create_trigger': {
      const t = (await client.request('POST', '/v1/triggers', c.trigger)).body as TriggerWithTokenJson;
      return t.token ? { token: { trigger: t.name, id: t.id, token: t.token } } : {};
    }
    case 'update_trigger':
      await client.request('PATCH', `/v1/triggers/${idPath(c.trigger.id)}`, patchOf(c.fields));
      return {};
    case 'delete_trigger':
      await client.request('DELETE', `/v1/triggers/${idPath(c.trigger.id)}`);
      return {};
  }
}

const patchOf = (fields: { field: string; to: unknown }[]) =>
  Object.fromEntries(fields.map((f) => [f.field, f.to]));
