import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { createJob, createSession, expectError, jobIds, sessionCount } from './helpers.js';

const LIMIT = 512;

describe('bad input: clear answers, nothing changes', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await createHarness({
      patch: (c) => {
        c.server.body_limit_bytes = LIMIT;
      },
    });
  });

  afterEach(async () => {
    await h.close();
  });

  describe('malformed JSON', () => {
    it.each([
      ['a truncated object', '{"workspace": '],
      ['single quotes', "{'workspace': '/tmp'}"],
      ['a trailing comma', '{"workspace": "/tmp",}'],
      ['plain text', 'workspace=/tmp'],
    ])('POST /v1/sessions with %s is a 400 malformed_json', async (_name, rawBody) => {
      const err = expectError(await h.call('POST', '/v1/sessions', { rawBody }), 400, 'malformed_json');
      expect(err.message).toMatch(/not valid JSON/);
      expect(await sessionCount(h)).toBe(0);
    });
  });

  describe('body size limit (config.server.body_limit_bytes)', () => {
    const padded = (workspace: string, size: number): string => {
      const json = JSON.stringify({ workspace });
      expect(size).toBeGreaterThanOrEqual(json.length);
      return json + ' '.repeat(size - Buffer.byteLength(json));
    };

    it('accepts a body of exactly the limit', async () => {
      const rawBody = padded(h.workspace, LIMIT);
      expect(Buffer.byteLength(rawBody)).toBe(LIMIT);
      const res = await h.call('POST', '/v1/sessions', { rawBody });
      expect(res.status).toBe(201);
    });

    it('refuses a body one byte over the limit with 413 and creates nothing', async () => {
      const rawBody = padded(h.workspace, LIMIT + 1);
      const err = expectError(await h.call('POST', '/v1/sessions', { rawBody }), 413, 'payload_too_large');
      expect(err.message).toContain(String(LIMIT));
      expect(await sessionCount(h)).toBe(0);
    });

    it('refuses an oversized body announced by Content-Length with 413', async () => {
      const rawBody = padded(h.workspace, 4 * LIMIT);
      const res = await h.call('POST', '/v1/sessions', {
        rawBody,
        headers: { 'content-length': String(Buffer.byteLength(rawBody)) },
      });
      expectError(res, 413, 'payload_too_large');
      expect(await sessionCount(h)).toBe(0);
    });

    it('refuses an oversized job with 413 and the job list is unchanged', async () => {
      const s = await createSession(h);
      const before = await createJob(h, s.id);
      const res = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
        body: { cron: '30 9 * * *', prompt: 'x'.repeat(2 * LIMIT) },
      });
      expectError(res, 413, 'payload_too_large');
      expect(await jobIds(h, s.id)).toEqual([before.id]);
    });
  });

  describe('invalid query parameters', () => {
    it.each([
      ['limit=0', '/v1/sessions?limit=0', 'limit'],
      ['limit=abc', '/v1/sessions?limit=abc', 'limit'],
      ['limit=201', '/v1/sessions?limit=201', 'limit'],
      ['limit=1.5', '/v1/sessions?limit=1.5', 'limit'],
      ['an unknown status', '/v1/sessions?status=archived', 'status'],
      ['runs limit=0', '/v1/runs?limit=0', 'limit'],
      ['runs limit=abc', '/v1/runs?limit=abc', 'limit'],
      ['an unknown run status', '/v1/runs?status=exploded', 'status'],
    ])('%s is a 422 naming the parameter', async (_name, path, param) => {
      const res = await h.call('GET', path);
      const err = expectError(res, 422, 'invalid_request');
      expect(err.message).toMatch(new RegExp(`^${param} must `));
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(param);
    });

    it('an unknown query parameter is a 422', async () => {
      const err = expectError(await h.call('GET', '/v1/sessions?colour=blue'), 422, 'invalid_request');
      expect(err.message).toContain('colour');
    });

    it.each([
      ['garbage', 'garbage'],
      ['base64 without a separator', Buffer.from('12345').toString('base64url')],
      ['a non-numeric time', Buffer.from('abc:ses_x').toString('base64url')],
    ])('a bad cursor (%s) is a 400 bad_cursor on sessions and runs', async (_name, cursor) => {
      await createSession(h);
      expectError(await h.call('GET', `/v1/sessions?cursor=${cursor}`), 400, 'bad_cursor');
      expectError(await h.call('GET', `/v1/runs?cursor=${cursor}`), 400, 'bad_cursor');
    });
  });

  describe('validation messages read as sentences, with details by path', () => {
    const message = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await h.call(method, path, body === undefined ? {} : { body });
      const err = expectError(res, 422, 'invalid_request');
      return { message: err.message, details: res.body.error.details as { path: string; message: string }[] };
    };

    it('a missing field is required; the route says what for when it knows', async () => {
      const reject = await message('POST', '/v1/plans/pln_nope/reject', {});
      expect(reject.message).toBe('comment is required to reject');
      expect(reject.details).toEqual([{ path: 'comment', message: 'comment is required to reject' }]);
      const revise = await message('POST', '/v1/plans/pln_nope/revise', {});
      expect(revise.message).toBe('feedback is required to ask for a revision');
      const session = await message('POST', '/v1/sessions', { name: 'x' });
      expect(session.message).toBe('workspace is required');
    });

    it('a schema message of its own is kept, named by its field', async () => {
      const r = await message('POST', '/v1/plans/pln_nope/reject', { comment: '  ' });
      expect(r.message).toBe('comment: a rejection needs a comment');
    });

    it('wrong types, enums, bounds and unknown fields', async () => {
      const s = await createSession(h);
      const job = await message('POST', `/v1/sessions/${s.id}/jobs`, {
        cron: 7,
        prompt: 'p',
        recurring: 'yes',
        options: { execute_mode: 'yolo', max_turns: 1.5, budget_usd: 0 },
        repeat: 3,
      });
      expect(job.details).toEqual([
        { path: 'cron', message: 'cron must be a string' },
        { path: 'recurring', message: 'recurring must be true or false' },
        { path: 'options.budget_usd', message: 'options.budget_usd must be greater than 0' },
        { path: 'options.max_turns', message: 'options.max_turns must be an integer' },
        { path: 'options.execute_mode', message: 'options.execute_mode must be one of manual, edits, auto' },
        { path: '(root)', message: 'the body has unknown field "repeat"' },
      ]);
      expect(job.message).toBe(job.details.map((d) => d.message).join('; '));
      const thinking = await message('POST', '/v1/sessions', {
        workspace: h.workspace,
        defaults: { thinking: 'lots' },
      });
      expect(thinking.message).toMatch(/^defaults\.thinking must be off, adaptive or an object$/);
      expect((await message('GET', '/v1/runs?status=exploded')).message).toMatch(
        /^status must be one of queued, /,
      );
      expect((await message('GET', '/v1/sessions?limit=abc')).message).toBe('limit must be a number');
      expect((await message('GET', '/v1/sessions?limit=0')).message).toBe('limit must be at least 1');
      expect((await message('GET', '/v1/sessions?colour=blue')).message).toBe(
        'the query has unknown field "colour"',
      );
      expect((await message('POST', '/v1/sessions', { workspace: '' })).message).toBe(
        'workspace must not be empty',
      );
    });
  });

  describe('unknown routes', () => {
    it.each([
      ['GET', '/nope', null],
      ['GET', '/v1/nope', 'operator'],
      ['PUT', '/v1/sessions', 'operator'],
      ['PUT', '/v1/jobs/job_x', 'operator'],
      ['POST', '/v1/jobs/job_x/explode', 'operator'],
      ['GET', '/v2/sessions', null],
    ] as const)('%s %s is a 404 in the error shape', async (method, path, role) => {
      const res = await h.call(method, path, role ? { role } : { token: null });
      const err = expectError(res, 404, 'not_found');
      expect(err.message).toContain(path);
    });
  });

  describe('never a stack trace', () => {
    it('error answers across the API carry only code, message and details', async () => {
      const s = await createSession(h);
      const answers = [
        await h.call('GET', '/v1/sessions', { token: null }),
        await h.call('POST', '/v1/sessions', { role: 'viewer', body: { workspace: h.workspace } }),
        await h.call('POST', '/v1/sessions', { rawBody: '{' }),
        await h.call('POST', `/v1/sessions/${s.id}/jobs`, { body: { cron: '0 0 31 2 *', prompt: 'p' } }),
        await h.call('POST', `/v1/sessions/${s.id}/jobs`, { body: { cron: 7, prompt: 'p' } }),
        await h.call('GET', '/v1/jobs/job_nope'),
        await h.call('GET', '/v1/sessions?cursor=zz'),
        await h.call('POST', '/v1/sessions', { rawBody: 'x'.repeat(LIMIT + 1) }),
      ];
      expect(answers.map((r) => r.status)).toEqual([401, 403, 400, 422, 422, 404, 400, 413]);
      for (const res of answers) expectError(res, res.status, res.body.error.code);
    });
  });
});
