import { createHmac } from 'node:crypto';

// Signing follows GitHub's scheme for its own webhooks ("Validating webhook deliveries",
// https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries): the header's value is
// `sha256=` followed by the lowercase hex HMAC-SHA256 digest of the raw request body (its exact bytes,
// UTF-8), keyed with the webhook's secret; a receiver recomputes it over the bytes it received, before
// parsing them, and compares in constant time. GitHub names the header X-Hub-Signature-256; ours is
// X-Drydock-Signature-256, so a receiver that also takes GitHub's webhooks cannot mix the two up.

export const SIGNATURE_HEADER = 'x-drydock-signature-256';

/** The signature header's value for `body` under `secret`: `sha256=<hex>`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}
