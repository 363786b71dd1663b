import { afterEach, beforeEach, expect, it } from 'vitest';
import { ROUTES } from '../../src/http/contract/index.js';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => h.close());

/** The routes the app really serves, as "METHOD /path/{param}" (the /ui pages are HTML, not API). */
function servedRoutes(): string[] {
  const routes = new Set<string>();
  for (const r of h.app.routes) {
    if (r.method === 'ALL' || r.path.startsWith('/ui')) continue;
    routes.add(`${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
  }
  return [...routes].sort();
}

it('documents every route the app serves, and no other', async () => {
  const documented = ROUTES.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
  expect(documented).toEqual(servedRoutes());
});

it('serves an OpenAPI 3.1 document generated from the zod schemas', async () => {
  const res = await h.call('GET', '/openapi.json', { token: null });
  expect(res.status).toBe(200);
  const doc = res.body;
  expect(doc.openapi).toBe('3.1.0');
  const createJob = doc.paths['/v1/sessions/{id}/jobs'].post;
  const schema = createJob.requestBody.content['application/json'].schema;
  expect(schema.required).toEqual(expect.arrayContaining(['cron', 'prompt']));
  expect(schema.properties.cron.type).toBe('string');
  expect(schema.additionalProperties).toBe(false);
  expect(createJob.responses['422']).toBeDefined();
  expect(createJob.responses['409']).toBeDefined();
  const list = doc.paths['/v1/plans'].get;
  expect(list.parameters.map((p: any) => p.name)).toEqual(
    expect.arrayContaining(['status', 'limit', 'cursor']),
  );
  const status = list.parameters.find((p: any) => p.name === 'status');
  expect(status.schema.enum).toContain('pending_approval');
  const planContext = doc.paths['/v1/plans/{id}'].get.responses['200'].content['application/json'].schema;
  expect(planContext.required).toEqual(expect.arrayContaining(['id', 'context']));
  expect(Object.keys(planContext.properties.context.properties)).toEqual([
    'source',
    'rounds',
    'files',
    'mcp_calls',
    'questions',
    'cost',
    'decisions',
    'diff',
  ]);
  expect(doc.paths['/webhooks/github'].post.security).toEqual([]);
  // A correctly signed form-encoded webhook (GitHub's default Content type) is refused with the error body.
  expect(doc.paths['/webhooks/github'].post.responses['415'].content['application/json'].schema).toEqual({
    $ref: '#/components/schemas/Error',
  });
  expect(doc.paths['/v1/triggers/{id}/fire'].post['x-drydock-auth']).toBe('trigger_token');
});

it('gives every route a response for its success status, with a body schema unless it answers 204', async () => {
  const doc = (await h.call('GET', '/openapi.json', { token: null })).body;
  for (const route of servedRoutes()) {
    const [method, path] = route.split(' ') as [string, string];
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, route).toBeDefined();
    const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
    expect(success.length, `${route}: a success response`).toBeGreaterThan(0);
    for (const status of success) {
      const answer = op.responses[status];
      if (status === '204') {
        expect(answer.content, `${route} ${status}`).toBeUndefined();
        continue;
      }
      const [media] = Object.values(answer.content ?? {}) as { schema?: Record<string, unknown> }[];
      expect(media?.schema, `${route} ${status}: a body schema`).toBeDefined();
      expect(Object.keys(media!.schema!).length, `${route} ${status}: a non-empty schema`).toBeGreaterThan(0);
    }
  }
});

it('documents response bodies field by field, with their nullables and ISO times', async () => {
  const doc = (await h.call('GET', '/openapi.json', { token: null })).body;
  const run = doc.paths['/v1/runs/{id}'].get.responses['200'].content['application/json'].schema;
  expect(run.additionalProperties).toBe(false);
  expect(run.required).toEqual(expect.arrayContaining(['id', 'status', 'created_at', 'waiting_on']));
  expect(run.properties.created_at).toMatchObject({ type: 'string', format: 'date-time' });
  expect(run.properties.finished_at.anyOf).toEqual(
    expect.arrayContaining([expect.objectContaining({ type: 'null' })]),
  );
  const plans = doc.paths['/v1/plans'].get.responses['200'].content['application/json'].schema;
  expect(plans.required).toEqual(['items', 'next_cursor']);
  const events = doc.paths['/v1/runs/{id}/events'].get.responses['200'].content['text/event-stream'].schema;
  const types = (events.oneOf ?? events.anyOf).map((e: any) => e.properties.type.const);
  expect(types).toEqual(expect.arrayContaining(['run_started', 'plan_proposed', 'run_finished']));
  expect(doc.paths['/v1/jobs/{id}'].delete.responses['204']).toEqual({ description: 'No content' });
  expect(doc.components.schemas.Error.required).toEqual(['error']);
});
