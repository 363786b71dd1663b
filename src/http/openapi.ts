import { z } from 'zod';
import { ERROR_BODY, errorStatuses, ROUTES, type Route, type RouteResponse } from './contract/index.js';

// The OpenAPI 3.1 document, generated from the contract (src/http/contract/): request and response bodies are
// the zod schemas the routes validate with and the tests hold the served answers to.

/** A request schema as JSON Schema: what a client may send (defaults make fields optional). */
const inputSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
/** A response schema as JSON Schema: what a client receives. */
const outputSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'output', unrepresentable: 'any' });

function parameters(route: Route): unknown[] {
  const params: unknown[] = [];
  for (const m of route.path.matchAll(/\{(\w+)\}/g)) {
    params.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  const query = route.request?.query;
  if (query) {
    const schema = inputSchema(query) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      params.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: prop });
    }
  }
  return params;
}

function response(r: RouteResponse): Record<string, unknown> {
  if (r.contentType === null || r.schema === null) return { description: r.description };
  return { description: r.description, content: { [r.contentType]: { schema: outputSchema(r.schema) } } };
}

/** The OpenAPI 3.1 document of the whole API. */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(route.responses)) responses[status] = response(r);
    for (const status of errorStatuses(route)) {
      responses[status] = {
        description: 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const params = parameters(route);
    const body = route.request?.body;
    paths[route.path] ??= {};
    paths[route.path]![route.method] = {
      summary: route.summary,
      ...(params.length ? { parameters: params } : {}),
      ...(body
        ? { requestBody: { required: true, content: { 'application/json': { schema: inputSchema(body) } } } }
        : {}),
      responses,
      security: route.auth === 'none' || route.auth === 'webhook_signature' ? [] : [{ bearer: [] }],
      'x-drydock-auth': route.auth,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'drydock',
      version,
      description: 'Plan-mode AI agent runs that wait for a human approval.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: outputSchema(ERROR_BODY) },
    },
    paths,
  };
}
