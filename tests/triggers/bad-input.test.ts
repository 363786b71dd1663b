import { Webhooks } from '@octokit/webhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  allRuns,
  deliver,
  example,
  prPayload,
  SECRET,
  sign,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

let w: TriggerWorld | undefined;

afterEach(async () => {
  await w?.close();
  w = undefined;
});

const OLD_SECRET = 'the-secret-being-rotated-out';
const NEW_SECRET = 'the-secret-being-rotated-in';

describe('POST /webhooks/github refuses bad input with honest status codes', () => {
  it('401 for a wrong or missing signature, 400 for missing headers or malformed JSON', async () => {
    w = await triggerWorld();
    await w.trigger({ name: 'any', events: ['pull_request'], prompt: 'Review {{repository}}#{{number}}.' });
    const payload = prPayload('opened', { sha: w.repo.base });

    const wrong = await deliver(w.d, 'pull_request', payload, { secret: 'not-the-secret' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('unauthorized');

    const missing = await deliver(w.d, 'pull_request', payload, { signature: null });
    expect(missing.status).toBe(401);
    expect(missing.body.error.message).toContain('X-Hub-Signature-256');

    // A valid signature of another body, a sha1 signature, garbage.
    const raw = JSON.stringify(payload);
    expect(sign(raw)).toBe(await new Webhooks({ secret: SECRET }).sign(raw));
    for (const signature of [
      sign(`${raw} `),
      `sha1=${'0'.repeat(40)}`,
      'sha256=zz',
      sign(raw).toUpperCase(),
      sign(raw).slice(0, -1),
    ]) {
      const r = await deliver(w.d, 'pull_request', raw, { signature });
      expect(r.status, signature).toBe(401);
    }

    const noEvent = await deliver(w.d, null, payload);
    expect(noEvent.status).toBe(400);
    expect(noEvent.body.error.message).toContain('X-GitHub-Event');
    const noDelivery = await deliver(w.d, 'pull_request', payload, { delivery: null });
    expect(noDelivery.status).toBe(400);
    expect(noDelivery.body.error.message).toContain('X-GitHub-Delivery');

    const malformed = await deliver(w.d, 'pull_request', '{"action": "opened", "pull_request": {');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('malformed_json');

    const empty = await deliver(w.d, 'pull_request', '');
    expect(empty.status).toBeGreaterThanOrEqual(400);
    expect(empty.status).toBeLessThan(500);

    // None of it started anything, and none of it was recorded as a delivery.
    expect(await allRuns(w.d)).toEqual([]);
    expect(await w.d.daemon.store.listWebhookDeliveries({ limit: 10 })).toEqual([]);
  });

  it('answers a refused request with a large body instead of dropping the connection', async () => {
    // Refusals that come before the body is read (no signature, no delivery id) must still reach the client:
    // a reset connection looks like an outage to GitHub and breaks a proxy's reused upstream connection.
    w = await triggerWorld();
    const body = JSON.stringify({ zen: 'x'.repeat(256_000) });
    const answers: string[] = [];
    for (let i = 0; i < 30; i++) {
      const refused =
        i % 2 === 0
          ? { event: 'ping', opts: { signature: null } }
          : { event: 'ping', opts: { delivery: null, signature: 'sha256=00' } };
      try {
        const r = await deliver(w.d, refused.event, body, refused.opts);
        answers.push(String(r.status));
      } catch (err) {
        answers.push(
          `dropped: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`,
        );
      }
    }
    expect(answers.filter((a) => a.startsWith('dropped'))).toEqual([]);
    expect(new Set(answers)).toEqual(new Set(['401', '400']));
  });

  it('413 for a body over server.webhook_body_limit_bytes, before anything is verified', async () => {
    w = await triggerWorld({ patch: (c) => (c.server.webhook_body_limit_bytes = 4_096) });
    const big = example('push');
    big.padding = 'x'.repeat(5_000);
    const r = await deliver(w.d, 'push', big);
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('payload_too_large');
    // A body under the limit passes.
    const ok = await deliver(w.d, 'ping', { zen: 'Keep it logically awesome.', hook_id: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body.pong).toBe(true);
  });

  it('answers 413 to a body over the limit instead of dropping the connection', async () => {
    // The limit is checked from Content-Length before the body is read; the 413 must still reach the client
    // (e.g. with Connection: close), or GitHub and proxies see a reset instead of an answer.
    w = await triggerWorld({ patch: (c) => (c.server.webhook_body_limit_bytes = 65_536) });
    const body = JSON.stringify({ zen: 'x'.repeat(256_000) });
    const answers: string[] = [];
    for (let i = 0; i < 30; i++) {
      try {
        answers.push(String((await deliver(w.d, 'ping', body)).status));
      } catch (err) {
        answers.push(
          `dropped: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`,
        );
      }
    }
    expect(answers.filter((a) => a !== '413')).toEqual([]);
  });

  it('202 ignored for an event no trigger handles (gollum)', async () => {
    w = await triggerWorld();
    const r = await deliver(w.d, 'gollum', example('gollum'));
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ outcome: 'ignored', run_ids: [] });
    expect(r.body.detail).toContain('gollum');
  });

  it('accepts a body signed with either configured secret while one is rotated', async () => {
    w = await triggerWorld({ patch: (c) => (c.github.webhook_secrets = [OLD_SECRET, NEW_SECRET]) });
    const old = await deliver(w.d, 'ping', example('ping'), { secret: OLD_SECRET });
    expect(old.status).toBe(200);
    const rotated = await deliver(w.d, 'ping', example('ping'), { secret: NEW_SECRET });
    expect(rotated.status).toBe(200);
    expect(rotated.body.pong).toBe(true);
    const neither = await deliver(w.d, 'ping', example('ping'), { secret: 'drydock-test-webhook-secret-x' });
    expect(neither.status).toBe(401);
  });

  it('refuses every webhook (401) when no secret is configured', async () => {
    w = await triggerWorld({ patch: (c) => (c.github.webhook_secrets = []) });
    const r = await deliver(w.d, 'ping', example('ping'));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toContain('no secret is configured');
  });
});
