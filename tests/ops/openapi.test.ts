import { afterEach, beforeEach, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/http/openapi.js';
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
  const documented = OPERATIONS.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
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
    'questions',
    'cost',
    'decisions',
    'diff',
  ]);
  expect(doc.paths['/webhooks/github'].post.security).toEqual([]);
  expect(doc.paths['/v1/triggers/{id}/fire'].post['x-drydock-auth']).toBe('trigger_token');
});
