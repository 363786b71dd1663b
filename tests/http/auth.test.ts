import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueToken, newTokenId, TOKEN_ID } from '../../src/auth/tokens.js';
import { createHarness, type Harness } from '../support/harness.js';
import { createJob, createSession, expectError, jobIds, sessionCount } from './helpers.js';

describe('token ids', () => {
  it('never start with "-" or "_", so that no id reads as an option on a command line', () => {
    // 0xf8 encodes to '-' and 0xfc to '_' as base64url's first character: both are drawn again.
    const draws = [Buffer.alloc(12, 0xf8), Buffer.alloc(12, 0xfc), Buffer.alloc(12, 0x41)];
    const id = newTokenId(() => draws.shift()!);
    expect(draws).toHaveLength(0);
    expect(id).toMatch(TOKEN_ID);
    expect(id).toMatch(/^[A-Za-z0-9]/);
    for (let i = 0; i < 2000; i++) expect(newTokenId()).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{15}$/);
  });
});

describe('authentication and roles', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await createHarness();
  });

  afterEach(async () => {
    await h.close();
  });

  const expectUnauthorized = (res: Awaited<ReturnType<Harness['call']>>) => {
    expectError(res, 401, 'unauthorized');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  };

  describe('401', () => {
    it('a request without a token gets 401 with WWW-Authenticate', async () => {
      const res = await h.call('GET', '/v1/sessions', { token: null });
      expectUnauthorized(res);
      expect(res.body.error.message).toMatch(/bearer/i);
    });

    it('a write without a token is refused and creates nothing', async () => {
      expectUnauthorized(
        await h.call('POST', '/v1/sessions', { token: null, body: { workspace: h.workspace } }),
      );
      expect(await sessionCount(h)).toBe(0);
    });

    it.each([
      ['a short garbage token', 'garbage'],
      ['a longer garbage token', 'this-is-not-a-token-at-all'],
      ['an over-long token', 'x'.repeat(600)],
    ])('%s gets 401', async (_name, token) => {
      expectUnauthorized(await h.call('GET', '/v1/sessions', { token }));
    });

    it('a well-formed token the server never issued gets 401', async () => {
      const stranger = issueToken('stranger', 'stranger', 'admin', h.clock.now()).token;
      expect(stranger).toMatch(/^ddk_[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}$/);
      expectUnauthorized(await h.call('GET', '/v1/sessions', { token: stranger }));
    });

    it('a known token id with the wrong secret gets 401', async () => {
      const [id] = h.tokens.operator.split('.');
      const forged = `${id}.${'A'.repeat(43)}`;
      expect(forged).not.toBe(h.tokens.operator);
      expectUnauthorized(await h.call('GET', '/v1/sessions', { token: forged }));
    });

    it('a revoked token gets 401', async () => {
      const id = h.tokens.viewer.slice('ddk_'.length, h.tokens.viewer.indexOf('.'));
      h.store.db.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ?').run(h.clock.now(), id);
      expectUnauthorized(await h.call('GET', '/v1/sessions', { role: 'viewer' }));
    });

    it.each([
      ['Basic credentials', (t: string) => `Basic ${t}`],
      ['a bare token without the scheme', (t: string) => t],
      ['an empty bearer', () => 'Bearer '],
    ])('an Authorization header with %s gets 401', async (_name, header) => {
      const res = await h.call('GET', '/v1/sessions', {
        token: null,
        headers: { authorization: header(h.tokens.admin) },
      });
      expectUnauthorized(res);
    });

    it('the scheme name is case-insensitive', async () => {
      const res = await h.call('GET', '/v1/sessions', {
        token: null,
        headers: { authorization: `bearer ${h.tokens.viewer}` },
      });
      expect(res.status).toBe(200);
    });

    it('401 comes before 404: an unknown id does not reveal itself without a token', async () => {
      expectUnauthorized(await h.call('GET', '/v1/jobs/job_nope', { token: null }));
    });
  });

  describe('403 by role', () => {
    it('a viewer cannot create a session (403) but can read', async () => {
      const s = await createSession(h);
      const job = await createJob(h, s.id);

      const res = await h.call('POST', '/v1/sessions', { role: 'viewer', body: { workspace: h.workspace } });
      const err = expectError(res, 403, 'forbidden');
      expect(err.message).toContain('viewer');
      expect(await sessionCount(h)).toBe(1);

      for (const path of [
        '/v1/sessions',
        `/v1/sessions/${s.id}`,
        `/v1/sessions/${s.id}/jobs`,
        `/v1/jobs/${job.id}`,
        `/v1/runs?job_id=${job.id}`,
      ]) {
        const read = await h.call('GET', path, { role: 'viewer' });
        expect(read.status, path).toBe(200);
      }
    });

    it('a viewer cannot close a session, nor create, pause, resume, run or delete a job', async () => {
      const s = await createSession(h);
      const job = await createJob(h, s.id);
      const attempts: [string, string, unknown?][] = [
        ['DELETE', `/v1/sessions/${s.id}`],
        ['POST', `/v1/sessions/${s.id}/jobs`, { cron: '30 9 * * *', prompt: 'p' }],
        ['POST', `/v1/jobs/${job.id}/pause`],
        ['POST', `/v1/jobs/${job.id}/resume`],
        ['POST', `/v1/jobs/${job.id}/run`],
        ['DELETE', `/v1/jobs/${job.id}`],
      ];
      for (const [method, path, body] of attempts) {
        expectError(await h.call(method, path, { role: 'viewer', body }), 403, 'forbidden');
      }
      expect((await h.call('GET', `/v1/sessions/${s.id}`)).body.status).toBe('open');
      expect(await jobIds(h, s.id)).toEqual([job.id]);
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body).toEqual(job);
      expect((await h.call('GET', '/v1/runs')).body.items).toEqual([]);
      expect(h.runs).toEqual([]);
    });

    it('an approver cannot create a job or a session (403), and nothing is created', async () => {
      const s = await createSession(h);
      const job = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
        role: 'approver',
        body: { cron: '30 9 * * *', prompt: 'p' },
      });
      const err = expectError(job, 403, 'forbidden');
      expect(err.message).toContain('approver');
      expect(await jobIds(h, s.id)).toEqual([]);

      expectError(
        await h.call('POST', '/v1/sessions', { role: 'approver', body: { workspace: h.workspace } }),
        403,
        'forbidden',
      );
      expect(await sessionCount(h)).toBe(1);
    });

    it('403 does not depend on the body: a viewer sending malformed JSON still gets 403', async () => {
      expectError(await h.call('POST', '/v1/sessions', { role: 'viewer', rawBody: '{' }), 403, 'forbidden');
    });
  });
});
