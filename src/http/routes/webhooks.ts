import { type Context, Hono } from 'hono';
import { parseSignature, SignatureCheck, webhookSecrets } from '../../github/signature.js';
import type { BodyBudget } from '../body-budget.js';
import { declaredLength, tooLarge } from '../body-cap.js';
import { discardBody, eachChunk } from '../body-stream.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError } from '../errors.js';

const DELIVERY = /^[A-Za-z0-9-]{1,100}$/;
const EVENT = /^[a-z_]{1,64}$/;
const WHAT = 'webhook body';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What GitHub sends, and how its two content types differ. Facts from GitHub's documentation:
 * - Delivery headers (https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers):
 *   X-GitHub-Event (the event's name), X-GitHub-Delivery (a GUID per delivery), X-Hub-Signature-256 (sent when
 *   the webhook has a secret: `sha256=` and the HMAC-SHA256 hex digest of the request body, keyed with the
 *   secret), User-Agent `GitHub-Hookshot/...`. Validating: https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 * - Content type (https://docs.github.com/en/webhooks/using-webhooks/creating-webhooks): `application/json`
 *   delivers the JSON payload as the body of the POST; `application/x-www-form-urlencoded` sends it as a form
 *   parameter named `payload` (the body is `payload=` and the URL-encoded JSON, and that body is what is
 *   signed). A repository or organization webhook's `content_type` defaults to `form` (REST "Create a
 *   repository webhook", https://docs.github.com/en/rest/repos/webhooks#create-a-repository-webhook), so a
 *   webhook whose Content type was left alone arrives form-encoded. A GitHub App's one webhook has the same
 *   setting in its configuration (REST "Update a webhook configuration for an app", `content_type` json or form,
 *   https://docs.github.com/en/rest/apps/webhooks#update-a-webhook-configuration-for-an-app).
 * drydock reads JSON only: one format, and the bytes verified are the bytes parsed. A form-encoded delivery is
 * answered 415 saying where to change it, but only once its signature has matched, like every other judgement
 * of the body (malformed JSON included): a sender without the secret is told 401, never what drydock makes of
 * the body.
 */
const FORM = 'application/x-www-form-urlencoded';
const FORM_ENCODED = () =>
  new HttpError(
    415,
    'unsupported_media_type',
    "webhook body is form-encoded (application/x-www-form-urlencoded) and drydock reads JSON only: set the webhook's Content type to application/json on GitHub (a repository's or organization's webhook: Settings > Webhooks > Edit; a GitHub App's: its webhook configuration, content_type json)",
  );

/** What the headers say: a refusal, or what is needed to check the body. */
type Headed = { refusal: HttpError } | { event: string; delivery: string; digest: Buffer };

/**
 * POST /webhooks/github. No byte of the body is kept before it is known whether its signature
 * (X-Hub-Signature-256) can match, and what is kept while it is checked is bounded:
 *   1. Content-Length over server.webhook_body_limit_bytes: 413 at once.
 *   2. Refused by its headers (no signature, bad X-GitHub-Event or X-GitHub-Delivery, no secret configured, a
 *      signature that is not sha256 hex): the body is read and dropped, then the refusal is answered.
 *   3. The body's bytes are taken from `budget` (server.unauthenticated_body_budget_bytes, shared by every
 *      body not verified yet): a declared length that does not fit is refused at once, a chunked body that
 *      stops fitting is cut off, both with 503 and Retry-After.
 *   4. The body streams through one HMAC per configured secret (any may match, so secrets can be rotated) and
 *      is kept; when it ends its bytes go back to the budget, and only a verified body is judged: form-encoded
 *      (415, see FORM), else decoded and parsed as JSON (400 when it is not).
 * A body that arrives too slowly is cut off by the server's request timeout (server.request_timeout_ms, set in
 * src/daemon.ts). A verified delivery is recorded and answered; what it starts is worked out by the trigger
 * inbox (GET /v1/deliveries/:id tells the outcome).
 */
export function webhookRoutes(deps: AppDeps, budget: BodyBudget): Hono<Env> {
  const secrets = webhookSecrets(deps.config.github);
  const limit = deps.config.server.webhook_body_limit_bytes;
  // The bodies holding the budget now are verified, refused or cut off by the request timeout within this long.
  const retryAfter = String(Math.max(1, Math.ceil(deps.config.server.request_timeout_ms / 1000)));
  const busy = () =>
    new HttpError(503, 'busy', 'too many unverified webhook bytes in flight; retry later', undefined, {
      'Retry-After': retryAfter,
    });
  const intake: Intake = { deps, budget, limit, busy };

  const app = new Hono<Env>();
  app.post('/github', async (c) => {
    const declared = declaredLength(c, limit, WHAT);
    const headed = fromHeaders(deps, {
      signature: c.req.header('x-hub-signature-256'),
      event: c.req.header('x-github-event'),
      delivery: c.req.header('x-github-delivery'),
    });
    if ('refusal' in headed) {
      // Read the body (keeping none of it) before answering: a reply sent while the client is still uploading
      // would make Node drop the connection instead of delivering the refusal.
      await discardBody(c, limit);
      throw headed.refusal;
    }
    const { event, delivery } = headed;
    const body = await readSigned(c, intake, new SignatureCheck(secrets, headed.digest), declared);
    // ORDER MATTERS: the media type is judged only now, after the signature matched (see FORM above).
    if (mediaType(c.req.header('content-type')) === FORM) throw FORM_ENCODED();
    const { raw, payload } = parseBody(body);
    const answer = await deps.triggers.receiveGithub(event, delivery, raw, payload);
    deps.logger.debug({ event, delivery, outcome: answer.body.outcome ?? 'pong' }, 'webhook received');
    return c.json(answer.body, answer.kind === 'accepted' ? 202 : 200);
  });
  return app;
}

/** What reading a webhook body needs: the byte limit, the shared budget and the 503 it answers when full. */
interface Intake {
  deps: AppDeps;
  budget: BodyBudget;
  limit: number;
  busy: () => HttpError;
}

function fromHeaders(
  deps: AppDeps,
  { signature, event, delivery }: { signature?: string; event?: string; delivery?: string },
): Headed {
  if (!signature) return { refusal: new HttpError(401, 'unauthorized', 'missing X-Hub-Signature-256') };
  if (!event || !EVENT.test(event))
    return { refusal: new HttpError(400, 'bad_request', 'missing or invalid X-GitHub-Event') };
  if (!delivery || !DELIVERY.test(delivery))
    return { refusal: new HttpError(400, 'bad_request', 'missing or invalid X-GitHub-Delivery') };
  if (!webhookSecrets(deps.config.github).length) {
    deps.logger.warn(
      'webhook refused: neither github.webhook_secrets nor github.app.webhook_secret is configured',
    );
    const refusal = new HttpError(
      401,
      'unauthorized',
      'webhook signature cannot be verified: no secret is configured',
    );
    return { refusal };
  }
  const digest = parseSignature(signature);
  return digest ? { event, delivery, digest } : { refusal: mismatch() };
}

/** The body's bytes, read within the budget through `check`; throws unless its signature matches. */
async function readSigned(
  c: Context<Env>,
  { deps, budget, limit, busy }: Intake,
  check: SignatureCheck,
  declared: number | undefined,
): Promise<{ chunks: Uint8Array[]; read: number }> {
  const chunks: Uint8Array[] = [];
  let read = 0;
  const reservation = budget.open();
  try {
    // ORDER MATTERS: bytes are taken from the budget before they are kept, and every one is given back in
    // this finally whatever happens (verified or not, refused, client gone, request timed out).
    if (declared !== undefined && !reservation.cover(declared)) {
      deps.logger.debug({ declared, inFlight: budget.inFlight }, 'webhook refused: body budget is full');
      throw busy();
    }
    await eachChunk(c, (chunk) => {
      read += chunk.byteLength;
      if (read > limit) throw tooLarge(limit, WHAT);
      if (!reservation.cover(read)) {
        deps.logger.debug({ read, inFlight: budget.inFlight }, 'webhook cut off: body budget is full');
        throw busy();
      }
      check.update(chunk);
      chunks.push(chunk);
    });
  } finally {
    reservation.release();
  }
  if (read === 0 || !check.matches()) throw mismatch();
  return { chunks, read };
}

/** A verified body decoded and parsed; 400 when it is not UTF-8 JSON. */
function parseBody({ chunks, read }: { chunks: Uint8Array[]; read: number }): {
  raw: string;
  payload: unknown;
} {
  try {
    // fatal: JSON is UTF-8, and the bytes verified are the bytes decoded (see github-signature.ts).
    const raw = utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, read));
    return { raw, payload: JSON.parse(raw) };
  } catch {
    throw new HttpError(400, 'malformed_json', 'webhook body is not valid JSON');
  }
}

/** A Content-Type's media type, lower case, without its parameters (`; charset=utf-8`). */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

const mismatch = () => new HttpError(401, 'unauthorized', 'webhook signature does not match');
