import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { expectError } from './helpers.js';

describe('health and readiness', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await createHarness();
  });

  afterEach(async () => {
    await h.scheduler.stop();
    // Nothing may be left running once a test is done.
    expect(h.scheduler.isRunning).toBe(false);
    await h.close();
  });

  it('GET /healthz answers 200 without a token', async () => {
    const res = await h.call('GET', '/healthz', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 503 (not 401) while the scheduler is not started', async () => {
    expect(h.scheduler.isRunning).toBe(false);
    const res = await h.call('GET', '/readyz', { token: null });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'not_ready',
      checks: { store: true, scheduler: false },
      model: { id: 'claude-sonnet-5-5', configured: false },
      replica: h.services.replica,
    });
  });

  it('GET /readyz names the replica that answered: the one kept in data_dir', async () => {
    const res = await h.call('GET', '/readyz', { token: null });
    expect(res.body.replica).toMatch(/^r-[0-9a-f]{12}$/);
    expect(res.body.replica).toBe(h.services.replica);
  });

  it('GET /readyz answers 200 once the scheduler is started, 503 again after it stops', async () => {
    h.scheduler.start();
    const ready = await h.call('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { store: true, scheduler: true },
      model: { id: 'claude-sonnet-5-5', configured: false },
      replica: h.services.replica,
    });

    await h.scheduler.stop();
    const stopped = await h.call('GET', '/readyz', { token: null });
    expect(stopped.status).toBe(503);
    expect(stopped.body.checks.scheduler).toBe(false);
  });

  it('GET /readyz reports the store as not ready when it cannot be read, without an error body leak', async () => {
    h.scheduler.start();
    await h.store.close();
    const res = await h.call('GET', '/readyz', { token: null });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'not_ready',
      checks: { store: false, scheduler: true },
      model: { id: 'claude-sonnet-5-5', configured: false },
      replica: h.services.replica,
    });
  });

  it('an unexpected failure is a bare 500 in the error shape, with no stack trace or driver message', async () => {
    await h.store.close();
    const res = await h.call('GET', '/v1/sessions');
    const err = expectError(res, 500, 'internal');
    expect(err.message).toBe('internal error');
    expect(JSON.stringify(res.body)).not.toMatch(/database|sqlite/i);
  });
});
