import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { createHarness } from '../support/harness.js';
import { deliver, example, SECRET, sign } from '../triggers/helpers.js';

// A webhook whose Content type was left at GitHub's default arrives form-encoded: the body is `payload=` and the
// URL-encoded JSON, signed as sent (src/http/routes/webhooks.ts cites GitHub's documentation). drydock answers it
// 415 saying what to change on GitHub, but only to a sender whose signature matched: without the secret the
// answer is 401 whatever the body is.

const FORM = 'application/x-www-form-urlencoded';

/** A real pull_request.opened payload as GitHub sends it with Content type application/x-www-form-urlencoded. */
function formBody(): { json: string; form: string } {
  const json = JSON.stringify(example('pull_request', 'opened'));
  return { json, form: new URLSearchParams({ payload: json }).toString() };
}

describe('POST /webhooks/github with a form-encoded body', () => {
  let d: TestDaemon;
  beforeEach(async () => {
    d = await startTestDaemon({ patch: (c) => (c.github.webhook_secrets = [SECRET]) });
  });
  afterEach(async () => {
    await d.stop();
  });

  /** The webhook deliveries the daemon recorded. */
  async function deliveries(): Promise<unknown[]> {
    const r = await d.api('GET', '/v1/deliveries');
    expect(r.status).toBe(200);
    return r.body.items;
  }

  it('answers a correctly signed one 415, saying to set Content type to application/json, and records nothing', async () => {
    const { json, form } = formBody();
    expect(form.startsWith('payload=%7B%22action%22%3A%22opened%22')).toBe(true);
    const r = await deliver(d, 'pull_request', form, { headers: { 'content-type': FORM }, wait: false });
    expect(r.status).toBe(415);
    expect(r.body.error.code).toBe('unsupported_media_type');
    expect(r.body.error.message).toContain('form-encoded');
    expect(r.body.error.message).toContain("set the webhook's Content type to application/json");
    expect(r.body.error.message).toContain('Settings > Webhooks > Edit');
    expect(await deliveries()).toEqual([]);

    // Once the webhook is set to JSON, GitHub's redelivery (the same X-GitHub-Delivery) is taken as new.
    const again = await deliver(d, 'pull_request', json, { delivery: r.delivery, wait: false });
    expect(again.status).toBe(202);
    expect(again.body.delivery_id).toMatch(/^dlv_/);
    expect(await deliveries()).toHaveLength(1);
  });

  it('reads the media type in any case and without its parameters', async () => {
    const { form } = formBody();
    const r = await deliver(d, 'pull_request', form, {
      headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=utf-8' },
      wait: false,
    });
    expect(r.status).toBe(415);
    expect(r.body.error.code).toBe('unsupported_media_type');
  });

  it.each([
    ['unsigned', null, 'missing X-Hub-Signature-256'],
    ['signed with another secret', sign(formBody().form, 'not-the-configured-secret'), 'does not match'],
    ['signed over other bytes', sign(formBody().json), 'does not match'],
  ])('answers one %s 401, never 415', async (_what, signature, message) => {
    const r = await deliver(d, 'pull_request', formBody().form, {
      signature,
      headers: { 'content-type': FORM },
      wait: false,
    });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthorized');
    expect(r.body.error.message).toContain(message);
    expect(JSON.stringify(r.body)).not.toContain('application/json');
    expect(await deliveries()).toEqual([]);
  });
});

it('answers every webhook 401 while no secret is configured, a correctly signed form-encoded one too', async () => {
  const h = await createHarness();
  try {
    expect(h.config.github.webhook_secrets).toEqual([]);
    const { form } = formBody();
    const r = await h.call('POST', '/webhooks/github', {
      token: null,
      rawBody: form,
      headers: {
        'content-type': FORM,
        'x-github-event': 'pull_request',
        'x-github-delivery': crypto.randomUUID(),
        'x-hub-signature-256': sign(form),
      },
    });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('webhook signature cannot be verified: no secret is configured');
  } finally {
    await h.close();
  }
});
