import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, T0 } from '../support/harness.js';
import { createJob, createSession, expectError, iso, jobIds, MIN, sessionCount } from './helpers.js';

describe('sessions API', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await createHarness();
  });

  afterEach(async () => {
    await h.close();
  });

  describe('POST /v1/sessions', () => {
    it('refuses a relative or missing workspace instead of resolving it against the daemon directory', async () => {
      const relative = await h.call('POST', '/v1/sessions', { body: { workspace: '.' } });
      expect(relative.status).toBe(422);
      expect(relative.body.error).toMatchObject({
        code: 'invalid_workspace',
        message:
          'workspace "." is not an absolute path: give the directory\'s full path (the daemon does not resolve paths against its own directory)',
      });
      const missing = await h.call('POST', '/v1/sessions', { body: { workspace: `${h.workspace}/nope` } });
      expect(missing.body.error.message).toBe(`workspace ${h.workspace}/nope is not an existing directory`);
      expect(await sessionCount(h)).toBe(0);
    });

    it('accepts thinking in the old {enabled, budget_tokens} shape and stores it in the new one', async () => {
      for (const [given, stored] of [
        [{ enabled: true, budget_tokens: 2048 }, { budget_tokens: 2048 }],
        [{ enabled: true }, 'adaptive'],
        [{ enabled: false }, 'off'],
        ['off', 'off'],
      ] as const) {
        const res = await h.call('POST', '/v1/sessions', {
          body: { workspace: h.workspace, defaults: { thinking: given } },
        });
        expect(res.status).toBe(201);
        expect(res.body.defaults.thinking).toEqual(stored);
      }
    });

    it('creates a session owned by the caller, echoing its defaults', async () => {
      const defaults = {
        model: 'claude-opus-4-6',
        thinking: { budget_tokens: 4096 },
        effort: 'high',
        budget_usd: 2.5,
        max_turns: 40,
        approvals_required: 2,
        allow_self_approval: false,
        execute_mode: 'edits',
      };
      const res = await h.call('POST', '/v1/sessions', {
        body: { name: '  nightly review  ', workspace: h.workspace, defaults },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^ses_[A-Za-z0-9_-]+$/),
        name: 'nightly review',
        workspace: h.workspace,
        owner: 'operator-user',
        status: 'open',
        defaults,
        limits: {},
        created_at: iso(T0),
        closed_at: null,
        made_by_trigger: false,
      });
    });

    it('names a session after its id and stores empty defaults when none are given', async () => {
      const s = await createSession(h);
      expect(s.name).toBe(s.id);
      expect(s.defaults).toEqual({});
    });

    it('records the identity of whoever creates it (admin)', async () => {
      const res = await h.call('POST', '/v1/sessions', { role: 'admin', body: { workspace: h.workspace } });
      expect(res.status).toBe(201);
      expect(res.body.owner).toBe('admin-user');
    });

    it('normalizes a workspace path with "." and ".." segments', async () => {
      const s = await createSession(h, { workspace: `${h.workspace}/../workspace/.` });
      expect(s.workspace).toBe(h.workspace);
    });

    it('rejects a workspace that does not exist with 422 and creates nothing', async () => {
      const missing = join(h.dir, 'no-such-dir');
      const res = await h.call('POST', '/v1/sessions', { body: { workspace: missing } });
      const err = expectError(res, 422, 'invalid_workspace');
      expect(err.message).toContain(missing);
      expect(await sessionCount(h)).toBe(0);
    });

    it('rejects a workspace that is a file, not a directory, with 422', async () => {
      const file = join(h.dir, 'a-file');
      writeFileSync(file, 'x');
      expectError(
        await h.call('POST', '/v1/sessions', { body: { workspace: file } }),
        422,
        'invalid_workspace',
      );
      expect(await sessionCount(h)).toBe(0);
    });

    it('rejects unknown fields with 422 naming the field, and creates nothing', async () => {
      const res = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace, colour: 'blue' } });
      const err = expectError(res, 422, 'invalid_request');
      expect(err.message).toContain('colour');
      expect(res.body.error.details).toEqual(expect.any(Array));
      expect(await sessionCount(h)).toBe(0);
    });

    it('rejects unknown fields inside defaults with 422', async () => {
      const res = await h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, defaults: { model: 'x', temperature: 2 } },
      });
      const err = expectError(res, 422, 'invalid_request');
      expect(err.message).toContain('temperature');
      expect(await sessionCount(h)).toBe(0);
    });

    it.each<[string, (ws: string) => Record<string, unknown>, string]>([
      ['missing workspace', () => ({ name: 'x' }), 'workspace'],
      ['workspace not a string', () => ({ workspace: 42 }), 'workspace'],
      ['empty name', (ws) => ({ workspace: ws, name: '   ' }), 'name'],
      [
        'unknown execute mode',
        (ws) => ({ workspace: ws, defaults: { execute_mode: 'yolo' } }),
        'defaults.execute_mode',
      ],
      [
        'thinking budget below 1024',
        (ws) => ({ workspace: ws, defaults: { thinking: { enabled: true, budget_tokens: 10 } } }),
        'defaults.thinking.budget_tokens',
      ],
      ['negative budget', (ws) => ({ workspace: ws, defaults: { budget_usd: -1 } }), 'defaults.budget_usd'],
    ])('rejects %s with 422 naming the field', async (_name, body, path) => {
      const res = await h.call('POST', '/v1/sessions', { body: body(h.workspace) });
      expectError(res, 422, 'invalid_request');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
      expect(res.body.error.message).toContain(path);
      expect(await sessionCount(h)).toBe(0);
    });

    it.each([
      ['a JSON array', '[]'],
      ['a JSON string', '"workspace"'],
      ['JSON null', 'null'],
    ])('rejects %s as the body with 422', async (_name, rawBody) => {
      expectError(await h.call('POST', '/v1/sessions', { rawBody }), 422, 'invalid_request');
      expect(await sessionCount(h)).toBe(0);
    });
  });

  describe('GET /v1/sessions[/:id]', () => {
    it('gets a session by id', async () => {
      const s = await createSession(h, { name: 'one' });
      const res = await h.call('GET', `/v1/sessions/${s.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(s);
    });

    it('answers 404 for an unknown session id, naming it', async () => {
      const res = await h.call('GET', '/v1/sessions/ses_doesnotexist');
      const err = expectError(res, 404, 'not_found');
      expect(err.message).toContain('ses_doesnotexist');
    });

    it('lists sessions oldest first, paginated with limit and next_cursor', async () => {
      // Two pairs share a creation time so the cursor has to break ties on the id.
      const created: string[] = [];
      for (let i = 0; i < 5; i++) {
        if (i % 2 === 0) h.clock.advance(MIN);
        created.push((await createSession(h, { name: `s${i}` })).id);
      }
      const first = await h.call('GET', '/v1/sessions?limit=2');
      expect(first.status).toBe(200);
      expect(first.body.items).toHaveLength(2);
      expect(first.body.next_cursor).toEqual(expect.any(String));

      const second = await h.call('GET', `/v1/sessions?limit=2&cursor=${first.body.next_cursor}`);
      expect(second.status).toBe(200);
      expect(second.body.items).toHaveLength(2);
      expect(second.body.next_cursor).toEqual(expect.any(String));

      const third = await h.call('GET', `/v1/sessions?limit=2&cursor=${second.body.next_cursor}`);
      expect(third.status).toBe(200);
      expect(third.body.items).toHaveLength(1);
      expect(third.body.next_cursor).toBeNull();

      const seen = [...first.body.items, ...second.body.items, ...third.body.items];
      const ids = seen.map((s: { id: string }) => s.id);
      expect(new Set(ids).size).toBe(5);
      expect([...ids].sort()).toEqual([...created].sort());
      // Ordered by (created_at, id).
      const keys = seen.map((s: { created_at: string; id: string }) => `${s.created_at}|${s.id}`);
      expect(keys).toEqual([...keys].sort());
      // Same-time pairs come out in id order, so only the groups are fixed.
      const names = seen.map((s: { name: string }) => s.name);
      expect([names.slice(0, 2).sort(), names.slice(2, 4).sort(), names[4]]).toEqual([
        ['s0', 's1'],
        ['s2', 's3'],
        's4',
      ]);
    });

    it('answers a full page with next_cursor null when everything fits', async () => {
      await createSession(h);
      await createSession(h);
      const res = await h.call('GET', '/v1/sessions?limit=2');
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(2);
      expect(res.body.next_cursor).toBeNull();
    });

    it('filters by status', async () => {
      const open = await createSession(h, { name: 'open' });
      const closed = await createSession(h, { name: 'closed' });
      expect((await h.call('DELETE', `/v1/sessions/${closed.id}`)).status).toBe(200);
      const o = await h.call('GET', '/v1/sessions?status=open');
      expect(o.body.items.map((s: { id: string }) => s.id)).toEqual([open.id]);
      const c = await h.call('GET', '/v1/sessions?status=closed');
      expect(c.body.items.map((s: { id: string }) => s.id)).toEqual([closed.id]);
    });
  });

  describe('DELETE /v1/sessions/:id (close)', () => {
    it('closes the session and deletes its jobs, keeping run history', async () => {
      const s = await createSession(h);
      const jobs = [
        await createJob(h, s.id),
        await createJob(h, s.id, { cron: '0 * * * *' }),
        await createJob(h, s.id, { cron: '15 10 * * *', recurring: false }),
      ];
      const run = await h.call('POST', `/v1/jobs/${jobs[0].id}/run`);
      expect(run.status).toBe(201);

      h.clock.advance(5 * MIN);
      const res = await h.call('DELETE', `/v1/sessions/${s.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: s.id,
        status: 'closed',
        closed_at: iso(T0 + 5 * MIN),
        deleted_jobs: 3,
      });

      for (const job of jobs) expectError(await h.call('GET', `/v1/jobs/${job.id}`), 404, 'not_found');
      expect(await jobIds(h, s.id)).toEqual([]);
      expect(await h.store.countJobs()).toBe(0);

      const got = await h.call('GET', `/v1/sessions/${s.id}`);
      expect(got.body).toMatchObject({ status: 'closed', closed_at: iso(T0 + 5 * MIN) });

      // History stays.
      const runAfter = await h.call('GET', `/v1/runs/${run.body.id}`);
      expect(runAfter.status).toBe(200);
      expect(runAfter.body.job_id).toBe(jobs[0].id);
    });

    it('refuses a new job on a closed session with 409 and creates nothing', async () => {
      const s = await createSession(h);
      await h.call('DELETE', `/v1/sessions/${s.id}`);
      const res = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
        body: { cron: '30 9 * * *', prompt: 'p' },
      });
      const err = expectError(res, 409, 'conflict');
      expect(err.message).toContain('closed');
      expect(await h.store.countJobs()).toBe(0);
    });

    it('closing an already closed session keeps its original close time', async () => {
      const s = await createSession(h);
      await h.call('DELETE', `/v1/sessions/${s.id}`);
      h.clock.advance(MIN);
      const again = await h.call('DELETE', `/v1/sessions/${s.id}`);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ status: 'closed', closed_at: iso(T0), deleted_jobs: 0 });
    });

    it('answers 404 for an unknown session', async () => {
      expectError(await h.call('DELETE', '/v1/sessions/ses_nope'), 404, 'not_found');
    });

    it('leaves other sessions and their jobs alone', async () => {
      const a = await createSession(h);
      const b = await createSession(h);
      await createJob(h, a.id);
      const kept = await createJob(h, b.id);
      const res = await h.call('DELETE', `/v1/sessions/${a.id}`);
      expect(res.body.deleted_jobs).toBe(1);
      expect(await jobIds(h, b.id)).toEqual([kept.id]);
      expect((await h.call('GET', `/v1/sessions/${b.id}`)).body.status).toBe('open');
    });
  });
});
