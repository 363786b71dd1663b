import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { Harness } from '../support/harness.js';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

export type Response = Awaited<ReturnType<Harness['call']>>;

const ERROR_KEYS = new Set(['code', 'message', 'details']);

/**
 * Every error answer has the one documented shape `{"error": {"code", "message", "details"?}}`, is JSON,
 * and leaks no stack trace or source location.
 */
export function expectError(res: Response, status: number, code: string): { code: string; message: string } {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error: { code } } });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  for (const key of Object.keys(res.body.error))
    expect(ERROR_KEYS.has(key), `unexpected key ${key}`).toBe(true);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  const text = JSON.stringify(res.body);
  expect(text).not.toMatch(/\bat [^"]*:\d+:\d+/); // a V8 stack frame
  expect(text).not.toMatch(/node_modules|\.ts:\d+|\.js:\d+/);
  expect(text.toLowerCase()).not.toContain('stack');
  return res.body.error;
}

export async function createSession(h: Harness, body: Record<string, unknown> = {}): Promise<any> {
  const res = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function createJob(
  h: Harness,
  sessionId: string,
  body: Record<string, unknown> = {},
): Promise<any> {
  const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
    body: { cron: '30 9 * * *', prompt: 'review the open pull requests', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function jobIds(h: Harness, sessionId: string): Promise<string[]> {
  const res = await h.call('GET', `/v1/sessions/${sessionId}/jobs`);
  expect(res.status).toBe(200);
  return res.body.items.map((j: { id: string }) => j.id);
}

export async function sessionCount(h: Harness): Promise<number> {
  const res = await h.call('GET', '/v1/sessions?limit=200');
  expect(res.status).toBe(200);
  return res.body.items.length;
}

// Computed here from the documented formulas (DESIGN.md "Scheduling semantics"), not from the code under test.
const digest = (id: string): Buffer => createHash('sha256').update(id).digest();

/** `frac` = first 32 bits of sha256(id) / 2^32. */
export const frac = (id: string): number => digest(id).readUInt32BE(0) / 2 ** 32;

/** Recurring due time: t1 + frac * min(0.1 * (t2 - t1), 10 min), whole ms. */
export const recurringDue = (id: string, t1: number, t2: number): number =>
  t1 + Math.floor(frac(id) * Math.min(0.1 * (t2 - t1), 10 * MIN));

export const iso = (t: number): string => new Date(t).toISOString();
