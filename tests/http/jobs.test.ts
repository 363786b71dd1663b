import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, T0 } from '../support/harness.js';
import {
  createJob,
  createSession,
  DAY,
  expectError,
  frac,
  HOUR,
  iso,
  jobIds,
  MIN,
  recurringDue,
} from './helpers.js';

const at = (s: string): number => Date.parse(s);

describe('cron jobs API', () => {
  let h: Harness;
  let sessionId: string;

  beforeEach(async () => {
    h = await createHarness();
    sessionId = (await createSession(h)).id;
  });

  afterEach(async () => {
    await h.close();
  });

  describe('POST /v1/sessions/:id/jobs', () => {
    it('creates a recurring job: exact nominal next fire, jitter within 10 min, expiry 7 days on', async () => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '30 9 * * *', timezone: 'UTC', prompt: 'nightly review' },
      });
      expect(res.status).toBe(201);
      const job = res.body;
      expect(job).toMatchObject({
        id: expect.stringMatching(/^job_[A-Za-z0-9_-]+$/),
        session_id: sessionId,
        cron: '30 9 * * *',
        effective_cron: '30 9 * * *',
        timezone: 'UTC',
        recurring: true,
        approximate: false,
        prompt: 'nightly review',
        status: 'active',
        created_by: 'operator-user',
        created_at: iso(T0),
        expires_at: '2026-06-08T08:00:00.000Z',
        next_fire_at: '2026-06-01T09:30:00.000Z',
        next_fire_final: false,
        fire_count: 0,
      });
      const nominal = at(job.next_fire_at);
      const jittered = at(job.next_fire_jittered_at);
      expect(jittered).toBeGreaterThanOrEqual(nominal);
      expect(jittered).toBeLessThan(nominal + 10 * MIN);
      // Exactly the documented formula, with t2 the next day's slot.
      expect(jittered).toBe(recurringDue(job.id, nominal, nominal + DAY));
    });

    it('shows the default overlap and jitter: buffer_one, the configured cap', async () => {
      const job = await createJob(h, sessionId);
      expect(job).toMatchObject({
        overlap: 'buffer_one',
        jitter: { max_seconds: null, approximate: false },
        buffered_slots: [],
      });
    });

    it("takes a job's own jitter: max_seconds 0 fires at the minute, 60 bounds the delay to a minute", async () => {
      const none = await createJob(h, sessionId, { jitter: { max_seconds: 0 }, overlap: 'skip' });
      expect(none).toMatchObject({ overlap: 'skip', jitter: { max_seconds: 0, approximate: false } });
      expect(none.next_fire_jittered_at).toBe(none.next_fire_at);
      const minute = await createJob(h, sessionId, { jitter: { max_seconds: 60 } });
      const nominal = at(minute.next_fire_at);
      expect(at(minute.next_fire_jittered_at) - nominal).toBe(Math.floor(frac(minute.id) * 60_000));
      // Kept for the slots after the first too.
      const stored = await h.store.getJob(minute.id);
      expect(stored!.jitterMaxSeconds).toBe(60);
    });

    it('takes jitter.approximate as approximate, and refuses the two disagreeing', async () => {
      const job = await createJob(h, sessionId, { cron: '0 9 * * *', jitter: { approximate: true } });
      expect(job.approximate).toBe(true);
      expect(job.jitter.approximate).toBe(true);
      expect(job.effective_cron).not.toBe('0 9 * * *');
      const both = await createJob(h, sessionId, { approximate: true, jitter: { approximate: true } });
      expect(both.approximate).toBe(true);
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '0 9 * * *', prompt: 'p', approximate: true, jitter: { approximate: false } },
      });
      expectError(res, 422, 'invalid_request');
      const bad = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '0 9 * * *', prompt: 'p', overlap: 'terminate_other', jitter: { max_seconds: -1 } },
      });
      expect(bad.status).toBe(422);
    });

    it('honours an explicit IANA timezone (America/New_York is UTC-4 in June)', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', timezone: 'America/New_York' });
      expect(job.timezone).toBe('America/New_York');
      expect(job.next_fire_at).toBe('2026-06-01T13:30:00.000Z');
    });

    it.each([
      ['Europe/Kyiv', 'Europe/Kyiv'],
      ['europe/kyiv', 'Europe/Kyiv'],
      ['Europe/Kiev', 'Europe/Kiev'],
      ['ASIA/KOLKATA', 'Asia/Kolkata'],
      ['Asia/Calcutta', 'Asia/Calcutta'],
      ['america/argentina/buenos_aires', 'America/Argentina/Buenos_Aires'],
      ['europe/berlin', 'Europe/Berlin'],
      ['utc', 'UTC'],
      ['etc/gmt+5', 'Etc/GMT+5'],
      ['US/Eastern', 'US/Eastern'],
    ])('keeps the zone as spelled, case corrected, never an older alias: %s -> %s', async (sent, stored) => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', timezone: sent });
      expect(job.timezone).toBe(stored);
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body.timezone).toBe(stored);
    });

    it('schedules in the zone kept as spelled: 09:30 in Kyiv (UTC+3 in June) is 06:30Z', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', timezone: 'europe/kyiv' });
      expect(job.next_fire_at).toBe('2026-06-02T06:30:00.000Z');
    });

    it('defaults the timezone from config (UTC in the harness)', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *' });
      expect(job.timezone).toBe('UTC');
      expect(job.next_fire_at).toBe('2026-06-01T09:30:00.000Z');
    });

    it('takes the default timezone from config.timezone when it is not UTC', async () => {
      const b = await createHarness({
        patch: (c) => {
          c.timezone = 'Europe/Berlin';
        },
      });
      try {
        const s = await createSession(b);
        const job = await createJob(b, s.id, { cron: '30 9 * * *' });
        expect(job.timezone).toBe('Europe/Berlin');
        // 09:30 CEST = 07:30Z, already past at 08:00Z: the next one is tomorrow.
        expect(job.next_fire_at).toBe('2026-06-02T07:30:00.000Z');
      } finally {
        await b.close();
      }
    });

    it('follows the configured jitter switch, expiry and job limit', async () => {
      const b = await createHarness({
        patch: (c) => {
          c.scheduler.jitter.enabled = false;
          c.scheduler.recurring_expiry_ms = 2 * DAY;
          c.scheduler.max_jobs_per_session = 2;
        },
      });
      try {
        const s = await createSession(b);
        const rec = await createJob(b, s.id, { cron: '30 9 * * *' });
        expect(rec.next_fire_jittered_at).toBe(rec.next_fire_at);
        expect(rec.expires_at).toBe(iso(T0 + 2 * DAY));
        const once = await createJob(b, s.id, { cron: '30 9 * * *', recurring: false });
        expect(once.next_fire_jittered_at).toBe(once.next_fire_at);
        const third = await b.call('POST', `/v1/sessions/${s.id}/jobs`, {
          body: { cron: '0 9 * * *', prompt: 'p' },
        });
        expectError(third, 409, 'conflict');
        expect((await jobIds(b, s.id)).sort()).toEqual([rec.id, once.id].sort());
      } finally {
        await b.close();
      }
    });

    it('approximate: true moves minute 0 forward by 1-6 minutes, deterministically from the id', async () => {
      const job = await createJob(h, sessionId, { cron: '0 9 * * *', approximate: true });
      expect(job.cron).toBe('0 9 * * *');
      expect(job.approximate).toBe(true);
      const m = /^(\d+) 9 \* \* \*$/.exec(job.effective_cron);
      expect(m, job.effective_cron).not.toBeNull();
      const minute = Number(m![1]);
      expect(minute).toBeGreaterThanOrEqual(1);
      expect(minute).toBeLessThanOrEqual(6);
      // Bits 32-63 of sha256(id) pick the shift (see src/scheduler/jitter.ts).
      const expected = 1 + (createHash('sha256').update(job.id).digest().readUInt32BE(4) % 6);
      expect(minute).toBe(expected);
      expect(job.next_fire_at).toBe(`2026-06-01T09:0${minute}:00.000Z`);
    });

    it('approximate: true leaves a minute other than 0 or 30 alone', async () => {
      const job = await createJob(h, sessionId, { cron: '15 9 * * *', approximate: true });
      expect(job.effective_cron).toBe('15 9 * * *');
      expect(job.next_fire_at).toBe('2026-06-01T09:15:00.000Z');
    });

    it('a one-shot has no expiry and, on a half hour, fires up to 90 s early', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', recurring: false });
      expect(job.recurring).toBe(false);
      expect(job.expires_at).toBeNull();
      expect(job.next_fire_at).toBe('2026-06-01T09:30:00.000Z');
      expect(job.next_fire_final).toBe(true);
      const nominal = at(job.next_fire_at);
      expect(at(job.next_fire_jittered_at)).toBe(nominal - Math.floor(frac(job.id) * 90_000));
    });

    it('accepts nicknames and stores them expanded', async () => {
      const job = await createJob(h, sessionId, { cron: '@daily' });
      expect(job.cron).toBe('0 0 * * *');
      expect(job.next_fire_at).toBe('2026-06-02T00:00:00.000Z');
    });

    it.each([
      // 2026-06-01 is a Monday.
      ['day-of-week 7 is Sunday', '0 9 * * 7', '2026-06-07T09:00:00.000Z'],
      ['day-of-week 0 is Sunday', '0 9 * * 0', '2026-06-07T09:00:00.000Z'],
      ['both day fields restricted: either matches (vixie)', '0 9 15 * 5', '2026-06-05T09:00:00.000Z'],
      ['a step in the minutes', '*/20 8 * * *', '2026-06-01T08:20:00.000Z'],
      ['@hourly', '@hourly', '2026-06-01T09:00:00.000Z'],
      ['@annually', '@annually', '2027-01-01T00:00:00.000Z'],
      ['weekday names in any case', '0 9 * * sat,Sun', '2026-06-06T09:00:00.000Z'],
      ['a month-name range', '0 9 1 jan-MAR *', '2027-01-01T09:00:00.000Z'],
      [
        'a day-of-month starting with * and a weekday: both must match (cronie)',
        '0 9 */2 * TUE',
        '2026-06-09T09:00:00.000Z',
      ],
      ['a leap day, less than 2 years ahead', '0 0 29 2 *', '2028-02-29T00:00:00.000Z'],
    ])('%s: %s next fires at %s', async (_name, cron, next) => {
      const job = await createJob(h, sessionId, { cron });
      expect(job.next_fire_at).toBe(next);
    });

    it('echoes per-job options', async () => {
      const options = { model: 'claude-opus-5-5', execute_mode: 'manual', approvals_required: 1 };
      const job = await createJob(h, sessionId, { options });
      expect(job.options).toEqual(options);
    });

    it('an admin may create a job, and is recorded as its creator', async () => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        role: 'admin',
        body: { cron: '30 9 * * *', prompt: 'p' },
      });
      expect(res.status).toBe(201);
      expect(res.body.created_by).toBe('admin-user');
    });

    it('answers 404 for an unknown session and creates nothing', async () => {
      const res = await h.call('POST', '/v1/sessions/ses_nope/jobs', {
        body: { cron: '30 9 * * *', prompt: 'p' },
      });
      expectError(res, 404, 'not_found');
      expect(await h.store.countJobs()).toBe(0);
    });
  });

  describe('invalid job requests: 422 naming the problem, nothing changes', () => {
    let existing: string;

    beforeEach(async () => {
      existing = (await createJob(h, sessionId)).id;
    });

    afterEach(async () => {
      expect(await jobIds(h, sessionId)).toEqual([existing]);
      expect(await h.store.countJobs()).toBe(1);
    });

    it.each([
      ['6 fields', '0 9 * * * *', /expected 5 fields.*got 6 fields/],
      ['4 fields', '0 9 * *', /expected 5 fields.*got 4 fields/],
      ['1 field', 'daily', /expected 5 fields.*got 1 field\b/],
      ['minute 60', '60 9 * * *', /minute value 60 is out of range 0-59/],
      ['hour 24', '0 24 * * *', /hour value 24 is out of range 0-23/],
      ['day-of-month 32', '0 9 32 * *', /day-of-month value 32 is out of range 1-31/],
      ['month 13', '0 9 * 13 *', /month value 13 is out of range 1-12/],
      ['day-of-week 8', '0 9 * * 8', /day-of-week value 8 is out of range 0-7/],
      ['a backwards range', '0 17-9 * * *', /hour range 17-9 is backwards/],
      ['step zero', '*/0 * * * *', /minute step 0 is out of range/],
      [
        'an unknown month name',
        '0 9 * JANUARY *',
        /month name "JANUARY" is not known, expected one of JAN-DEC/,
      ],
      ['31 February (no date in 4 years)', '0 0 31 2 *', /"0 0 31 2 \*" matches no date in the next 4 years/],
      [
        '30 February (no date in 4 years)',
        '0 0 30 feb *',
        /"0 0 30 FEB \*" matches no date in the next 4 years/,
      ],
      ['an unknown nickname', '@fortnightly', /unknown nickname "@fortnightly", expected one of @hourly/],
    ])('rejects a cron with %s', async (_name, cron, message) => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, { body: { cron, prompt: 'p' } });
      const err = expectError(res, 422, 'invalid_cron');
      expect(err.message).toMatch(message);
    });

    it('rejects an unknown timezone, naming it', async () => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '30 9 * * *', timezone: 'Mars/Olympus', prompt: 'p' },
      });
      expectError(res, 422, 'invalid_timezone');
      expect(res.body.error.message).toMatch(/time ?zone/i);
      expect(res.body.error.message).toContain('Mars/Olympus');
    });

    it('rejects a UTC offset in place of a zone name', async () => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '30 9 * * *', timezone: '+02:00', prompt: 'p' },
      });
      expectError(res, 422, 'invalid_timezone');
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['an empty cron', { cron: '', prompt: 'p' }, 'cron'],
      ['a missing prompt', { cron: '30 9 * * *' }, 'prompt'],
      ['a non-boolean recurring', { cron: '30 9 * * *', prompt: 'p', recurring: 'yes' }, 'recurring'],
      ['an unknown option', { cron: '30 9 * * *', prompt: 'p', options: { colour: 'red' } }, 'options'],
    ])('rejects %s with invalid_request', async (_name, body, path) => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, { body });
      expectError(res, 422, 'invalid_request');
      expect(res.body.error.message).toContain(path);
    });

    it('rejects an unknown field', async () => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '30 9 * * *', prompt: 'p', repeat: 3 },
      });
      expectError(res, 422, 'invalid_request');
      expect(res.body.error.message).toContain('repeat');
    });

    it('rejects malformed JSON with 400 malformed_json', async () => {
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        rawBody: '{"cron": "30 9 * * *",',
      });
      expectError(res, 400, 'malformed_json');
    });
  });

  describe('the 50-job limit', () => {
    it('the 51st job in a session is refused with 409, leaving exactly 50', async () => {
      expect(h.config.scheduler.max_jobs_per_session).toBe(50);
      for (let i = 0; i < 50; i++) {
        await createJob(h, sessionId, { cron: `${i} 9 * * *`, prompt: `job ${i}` });
      }
      const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
        body: { cron: '59 23 * * *', prompt: 'one too many' },
      });
      const err = expectError(res, 409, 'conflict');
      expect(err.message).toContain('50');
      const ids = await jobIds(h, sessionId);
      expect(ids).toHaveLength(50);
      expect(await h.store.countJobs()).toBe(50);

      // The limit is per session: another session still takes jobs.
      const other = await createSession(h);
      await createJob(h, other.id);

      // Deleting one makes room again.
      expect((await h.call('DELETE', `/v1/jobs/${ids[0]}`)).status).toBe(204);
      await createJob(h, sessionId);
      expect(await jobIds(h, sessionId)).toHaveLength(50);
    });
  });

  it('concurrent creates cannot overshoot the limit: 55 at once leave exactly 50', async () => {
    const answers = await Promise.all(
      Array.from({ length: 55 }, (_, i) =>
        h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
          body: { cron: `${i} 9 * * *`, prompt: `job ${i}` },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(50);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    expect(await jobIds(h, sessionId)).toHaveLength(50);
  });

  describe('reading jobs', () => {
    it('lists a session’s jobs in creation order', async () => {
      const a = await createJob(h, sessionId, { cron: '0 9 * * *' });
      h.clock.advance(1000);
      const b = await createJob(h, sessionId, { cron: '0 10 * * *' });
      const res = await h.call('GET', `/v1/sessions/${sessionId}/jobs`);
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([a, b]);
    });

    it('lists only that session’s jobs', async () => {
      const other = await createSession(h);
      await createJob(h, other.id);
      expect(await jobIds(h, sessionId)).toEqual([]);
    });

    it('answers 404 when listing jobs of an unknown session', async () => {
      expectError(await h.call('GET', '/v1/sessions/ses_nope/jobs'), 404, 'not_found');
    });

    it('gets a job by id', async () => {
      const job = await createJob(h, sessionId);
      const res = await h.call('GET', `/v1/jobs/${job.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(job);
    });

    it('answers 404 for an unknown job id, naming it', async () => {
      const err = expectError(await h.call('GET', '/v1/jobs/job_nope'), 404, 'not_found');
      expect(err.message).toContain('job_nope');
    });
  });

  describe('pause and resume', () => {
    it('pause clears the next fire; resume recomputes it from the clock, skipping passed slots', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', timezone: 'UTC' });
      const offset = at(job.next_fire_jittered_at) - at(job.next_fire_at);

      const paused = await h.call('POST', `/v1/jobs/${job.id}/pause`);
      expect(paused.status).toBe(200);
      expect(paused.body).toMatchObject({
        id: job.id,
        status: 'paused',
        next_fire_at: null,
        next_fire_jittered_at: null,
        next_fire_final: null,
      });
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body.status).toBe('paused');

      // 2026-06-02T10:00Z: both 06-01 09:30 and 06-02 09:30 passed while paused.
      h.clock.advance(DAY + 2 * HOUR);
      const resumed = await h.call('POST', `/v1/jobs/${job.id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({
        id: job.id,
        status: 'active',
        next_fire_at: '2026-06-03T09:30:00.000Z',
        next_fire_final: false,
        expires_at: job.expires_at,
      });
      // Jitter is a function of the job id and the slot gap: the same daily offset as before.
      expect(at(resumed.body.next_fire_jittered_at) - at(resumed.body.next_fire_at)).toBe(offset);
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body).toEqual(resumed.body);
    });

    it('resuming after the expiry schedules the final fire', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *' });
      await h.call('POST', `/v1/jobs/${job.id}/pause`);
      h.clock.advance(8 * DAY);
      const resumed = await h.call('POST', `/v1/jobs/${job.id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({ next_fire_at: '2026-06-09T09:30:00.000Z', next_fire_final: true });
    });

    it('a one-shot resumed inside its early-jitter window, before its nominal time, still fires', async () => {
      const job = await earlyOneShot();
      await h.scheduler.tick(); // the scheduler is running from 08:00Z
      await h.call('POST', `/v1/jobs/${job.id}/pause`);
      h.clock.set(at(job.next_fire_at) - 1); // due (early), but 09:30 has not passed
      const resumed = await h.call('POST', `/v1/jobs/${job.id}/resume`);
      expect(resumed.body).toMatchObject({ status: 'active', next_fire_at: job.next_fire_at });
      await h.scheduler.tick();
      expect(h.runs.map((r) => r.slotAt)).toEqual([at(job.next_fire_at)]);
      expectError(await h.call('GET', `/v1/jobs/${job.id}`), 404, 'not_found');
    });

    it('a one-shot resumed after its nominal time becomes missed', async () => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', recurring: false });
      await h.call('POST', `/v1/jobs/${job.id}/pause`);
      h.clock.set(at(job.next_fire_at) + 1);
      const resumed = await h.call('POST', `/v1/jobs/${job.id}/resume`);
      expect(resumed.body).toMatchObject({ status: 'missed', next_fire_at: job.next_fire_at });
      await h.scheduler.tick();
      expect(h.runs).toEqual([]);
    });

    it('resuming a job that is not paused is a 409 and changes nothing', async () => {
      const job = await createJob(h, sessionId);
      const err = expectError(await h.call('POST', `/v1/jobs/${job.id}/resume`), 409, 'conflict');
      expect(err.message).toContain('not paused');
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body).toEqual(job);
    });

    it.each(['pause', 'resume', 'run'])(
      'POST /v1/jobs/:id/%s answers 404 for an unknown job',
      async (action) => {
        expectError(await h.call('POST', `/v1/jobs/job_nope/${action}`), 404, 'not_found');
        expect(h.runs).toEqual([]);
      },
    );
  });

  describe('run now', () => {
    it('creates a manual run that shows up in GET /v1/runs?job_id=', async () => {
      const job = await createJob(h, sessionId, { prompt: 'look at the flaky tests' });
      const other = await createJob(h, sessionId, { cron: '0 12 * * *' });
      await h.call('POST', `/v1/jobs/${other.id}/run`);

      h.clock.advance(MIN);
      const res = await h.call('POST', `/v1/jobs/${job.id}/run`);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^run_[A-Za-z0-9_-]+$/),
        session_id: sessionId,
        job_id: job.id,
        slot_at: null,
        source: 'manual',
        phase: 'plan',
        status: 'queued',
        prompt: 'look at the flaky tests',
        requested_by: 'operator-user',
        coalesced_slots: 0,
        created_at: iso(T0 + MIN),
        started_at: null,
        finished_at: null,
        error: null,
        model: null,
        turns: 0,
        usage: {},
        cost_usd: 0,
        plan_id: null,
        attempt: 1,
        duration_ms: null,
        active_ms: 0,
        waiting: null,
        waiting_ms: null,
        revises_plan_id: null,
        executes_plan_id: null,
        execute_mode: null,
        result_commit: null,
        diff_stat: null,
        changed_files: null,
      });
      // Handed to the runner.
      expect(h.runs.map((r) => r.id)).toContain(res.body.id);

      const list = await h.call('GET', `/v1/runs?job_id=${job.id}`);
      expect(list.status).toBe(200);
      expect(list.body.items).toEqual([res.body]);
      expect(list.body.next_cursor).toBeNull();

      const one = await h.call('GET', `/v1/runs/${res.body.id}`);
      expect(one.status).toBe(200);
      // One run shows what it waits on as well: the other job's run, queued a minute before in the session.
      const earlier = (await h.call('GET', `/v1/runs?job_id=${other.id}`)).body.items[0];
      expect(one.body).toEqual({
        ...res.body,
        waiting_on: {
          kind: 'session',
          run_id: earlier.id,
          detail: `its session is busy with run ${earlier.id} (queued); a session runs one run at a time`,
        },
      });

      // The job itself keeps its schedule.
      const after = await h.call('GET', `/v1/jobs/${job.id}`);
      expect(after.body).toMatchObject({
        status: 'active',
        next_fire_at: job.next_fire_at,
        next_fire_jittered_at: job.next_fire_jittered_at,
      });
    });

    it('answers 404 for an unknown run id', async () => {
      expectError(await h.call('GET', '/v1/runs/run_nope'), 404, 'not_found');
    });
  });

  /** A one-shot at 09:30Z that may fire early; of a few, the one with the widest early window. */
  const earlyOneShot = async (): Promise<any> => {
    const jobs = [];
    for (let i = 0; i < 4; i++)
      jobs.push(await createJob(h, sessionId, { cron: '30 9 * * *', recurring: false }));
    const early = (j: any): number => at(j.next_fire_at) - at(j.next_fire_jittered_at);
    const job = jobs.sort((a, b) => early(b) - early(a))[0];
    for (const other of jobs) if (other !== job) await h.call('DELETE', `/v1/jobs/${other.id}`);
    expect(early(job)).toBeGreaterThan(0);
    return job;
  };

  describe('a one-shot is missed only once its nominal time has passed', () => {
    it('a daemon that starts inside the early-jitter window, before the nominal time, fires it', async () => {
      const job = await earlyOneShot();
      // Down since before the early due time; back up 1 ms before 09:30Z. The first tick starts the scheduler.
      h.clock.set(at(job.next_fire_at) - 1);
      await h.scheduler.tick();
      expect(h.runs.map((r) => r.slotAt)).toEqual([at(job.next_fire_at)]);
      expectError(await h.call('GET', `/v1/jobs/${job.id}`), 404, 'not_found');
    });

    it('a daemon that starts before the early due time fires it at that time', async () => {
      const job = await earlyOneShot();
      h.clock.set(at(job.next_fire_jittered_at) - 1);
      await h.scheduler.tick();
      expect(h.runs).toEqual([]);
      h.clock.set(at(job.next_fire_jittered_at));
      await h.scheduler.tick();
      expect(h.runs.map((r) => r.slotAt)).toEqual([at(job.next_fire_at)]);
    });

    it('a daemon that starts 1 ms after the nominal time records it as missed', async () => {
      const job = await earlyOneShot();
      h.clock.set(at(job.next_fire_at) + 1);
      await h.scheduler.tick();
      expect(h.runs).toEqual([]);
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body.status).toBe('missed');
    });
  });

  describe('a one-shot missed while the daemon was down', () => {
    // The scheduler records the missed slot on its first tick; the job then waits for a person.
    const missOneShot = async (): Promise<any> => {
      const job = await createJob(h, sessionId, { cron: '30 9 * * *', recurring: false });
      h.clock.advance(2 * HOUR); // 10:00Z: the 09:30 slot passed while nothing was running
      await h.scheduler.tick();
      const got = await h.call('GET', `/v1/jobs/${job.id}`);
      expect(got.body).toMatchObject({ status: 'missed', next_fire_at: '2026-06-01T09:30:00.000Z' });
      expect(h.runs).toEqual([]);
      const slots = await h.call('GET', `/v1/jobs/${job.id}/slots`);
      expect(slots.body.items).toEqual([
        {
          slot_at: '2026-06-01T09:30:00.000Z',
          last_slot_at: '2026-06-01T09:30:00.000Z',
          slots: 1,
          outcome: 'missed',
          run_id: null,
          recorded_at: '2026-06-01T10:00:00.000Z',
        },
      ]);
      return got.body;
    };

    it('cannot be paused or resumed (409), and stays missed', async () => {
      const job = await missOneShot();
      expectError(await h.call('POST', `/v1/jobs/${job.id}/pause`), 409, 'conflict');
      expectError(await h.call('POST', `/v1/jobs/${job.id}/resume`), 409, 'conflict');
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body).toEqual(job);
    });

    it('run-now fires its missed slot once and removes the job', async () => {
      const job = await missOneShot();
      const res = await h.call('POST', `/v1/jobs/${job.id}/run`);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        job_id: job.id,
        source: 'manual',
        slot_at: '2026-06-01T09:30:00.000Z',
        status: 'queued',
      });
      expectError(await h.call('GET', `/v1/jobs/${job.id}`), 404, 'not_found');
      expectError(await h.call('POST', `/v1/jobs/${job.id}/run`), 404, 'not_found');
      const runs = await h.call('GET', `/v1/runs?job_id=${job.id}`);
      expect(runs.body.items.map((r: { id: string }) => r.id)).toEqual([res.body.id]);
    });

    it('can be deleted', async () => {
      const job = await missOneShot();
      expect((await h.call('DELETE', `/v1/jobs/${job.id}`)).status).toBe(204);
      expect(await jobIds(h, sessionId)).toEqual([]);
    });
  });

  describe('GET /v1/runs', () => {
    it('pages runs newest first', async () => {
      const job = await createJob(h, sessionId);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        h.clock.advance(MIN);
        ids.push((await h.call('POST', `/v1/jobs/${job.id}/run`)).body.id);
      }
      const first = await h.call('GET', `/v1/runs?job_id=${job.id}&limit=2`);
      expect(first.body.items.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await h.call(
        'GET',
        `/v1/runs?job_id=${job.id}&limit=2&cursor=${first.body.next_cursor}`,
      );
      expect(second.body.items.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
      expect(second.body.next_cursor).toBeNull();
      const bySession = await h.call('GET', `/v1/runs?session_id=${sessionId}&status=queued`);
      expect(bySession.body.items).toHaveLength(3);
      const none = await h.call('GET', '/v1/runs?session_id=ses_other');
      expect(none.body.items).toEqual([]);
    });
  });

  describe('names', () => {
    it('a job may have a name, unique within its session: a second is refused with 409 naming the first', async () => {
      const job = await createJob(h, sessionId, { name: '  review  ' });
      expect(job.name).toBe('review');
      const again = expectError(
        await h.call('POST', `/v1/sessions/${sessionId}/jobs`, {
          body: { name: 'review', cron: '0 8 * * *', prompt: 'p' },
        }),
        409,
        'conflict',
      );
      expect(again.message).toBe(
        `session ${sessionId} already has a job named "review" (${job.id}); job names are unique within a session`,
      );
      expect(await jobIds(h, sessionId)).toEqual([job.id]);
      // Another session may use it; jobs without a name are many.
      const other = (await createSession(h)).id;
      expect((await createJob(h, other, { name: 'review' })).name).toBe('review');
      expect((await createJob(h, sessionId)).name).toBeNull();
    });
  });

  describe('PATCH /v1/jobs/:id', () => {
    it('changes the given fields, plans the job anew from now and keeps its name, id and history', async () => {
      const job = await createJob(h, sessionId, { name: 'review', cron: '30 9 * * *', timezone: 'UTC' });
      h.clock.advance(2 * DAY);
      const res = await h.call('PATCH', `/v1/jobs/${job.id}`, {
        body: { cron: '0 7 * * 1-5', timezone: 'europe/berlin', prompt: 'weekday review' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        id: job.id,
        name: 'review',
        session_id: sessionId,
        cron: '0 7 * * 1-5',
        timezone: 'Europe/Berlin',
        prompt: 'weekday review',
        recurring: true,
        status: 'active',
        created_at: job.created_at,
        // 2026-06-03 is a Wednesday; 07:00 in Berlin is 05:00 UTC. The expiry period starts again now.
        next_fire_at: '2026-06-04T05:00:00.000Z',
        expires_at: iso(T0 + 2 * DAY + 7 * DAY),
      });
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body).toEqual(res.body);
    });

    it('a paused job stays paused; a one-shot may become recurring', async () => {
      const job = await createJob(h, sessionId, { recurring: false });
      await h.call('POST', `/v1/jobs/${job.id}/pause`);
      const res = await h.call('PATCH', `/v1/jobs/${job.id}`, { body: { recurring: true } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'paused', recurring: true });
      expect(res.body.expires_at).not.toBeNull();
    });

    it('refuses what creation refuses, and unknown fields, changing nothing', async () => {
      const job = await createJob(h, sessionId, { name: 'review' });
      const patch = (body: unknown) => h.call('PATCH', `/v1/jobs/${job.id}`, { body });
      expectError(await patch({ cron: '61 * * * *' }), 422, 'invalid_cron');
      expectError(await patch({ timezone: 'Mars/Olympus' }), 422, 'invalid_timezone');
      // The name and the session are not changed this way.
      expectError(await patch({ name: 'renamed' }), 422, 'invalid_request');
      expectError(await h.call('PATCH', '/v1/jobs/job_nope', { body: {} }), 404, 'not_found');
      expect((await h.call('GET', `/v1/jobs/${job.id}`)).body).toEqual(job);
    });
  });

  describe('DELETE /v1/jobs/:id', () => {
    it('deletes with 204 and an empty body; the job is gone afterwards', async () => {
      const job = await createJob(h, sessionId);
      const keep = await createJob(h, sessionId);
      const res = await h.call('DELETE', `/v1/jobs/${job.id}`);
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();
      expectError(await h.call('GET', `/v1/jobs/${job.id}`), 404, 'not_found');
      expect(await jobIds(h, sessionId)).toEqual([keep.id]);
      expectError(await h.call('DELETE', `/v1/jobs/${job.id}`), 404, 'not_found');
    });

    it('answers 404 for an unknown job', async () => {
      expectError(await h.call('DELETE', '/v1/jobs/job_nope'), 404, 'not_found');
    });
  });
});
