import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { expect } from 'vitest';
import type { ModelServer } from '../support/model-server.js';

export function sdk(server: ModelServer, opts: Record<string, unknown> = {}): Anthropic {
  // A client timeout also keeps the SDK from refusing non-streaming calls with a large max_tokens.
  return new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0, timeout: 20_000, ...opts });
}

/** A POST with raw fetch; `version` is the `anthropic-version` header (the SDK sends 2026-10-21). */
export async function post(
  server: ModelServer,
  body: unknown,
  opts: { version?: string; beta?: string; path?: string } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-api-key': 'test',
    'anthropic-version': opts.version ?? '2023-06-01',
  };
  if (opts.beta) headers['anthropic-beta'] = opts.beta;
  const res = await fetch(`${server.url}${opts.path ?? '/v1/messages'}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Asserts that `call` fails with the API's error of this status, type and exact message. */
export async function expectApiError(
  call: Promise<unknown>,
  status: number,
  type: string,
  message: string,
): Promise<void> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected a ${status} ${type}: ${message}`).toBeInstanceOf(APIError);
  const e = err as APIError;
  expect(e.status).toBe(status);
  expect(e.error).toMatchObject({ type: 'error', error: { type, message } });
}

export async function expect400(call: Promise<unknown>, message: string): Promise<void> {
  await expectApiError(call, 400, 'invalid_request_error', message);
}

export const user = (content: any) => ({ role: 'user' as const, content });
export const assistant = (content: any) => ({ role: 'assistant' as const, content });
