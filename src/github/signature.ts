import { createHmac, type Hmac, timingSafeEqual } from 'node:crypto';

const HEADER = /^sha256=([0-9a-f]{64})$/;

/**
 * Every secret a webhook may be signed with: github.webhook_secrets (a repository's or organization's webhooks)
 * and github.app.webhook_secret (the App's own webhook, which GitHub signs with the secret set on the App).
 */
export function webhookSecrets(github: {
  webhook_secrets: readonly string[];
  app: { webhook_secret: string | null };
}): string[] {
  const secrets = [...github.webhook_secrets];
  if (github.app.webhook_secret !== null && !secrets.includes(github.app.webhook_secret)) {
    secrets.push(github.app.webhook_secret);
  }
  return secrets;
}

/**
 * The digest an X-Hub-Signature-256 header carries, or null when the header is not `sha256=` and 64 lowercase
 * hex digits (such a header matches no body).
 */
export function parseSignature(header: string): Buffer | null {
  const m = HEADER.exec(header);
  return m ? Buffer.from(m[1]!, 'hex') : null;
}

/**
 * Checks a GitHub webhook signature while the body streams in: one HMAC-SHA256 per configured secret, each fed
 * every chunk as it arrives, compared with the header's digest in constant time at the end. Any secret may match,
 * so a secret can be rotated by configuring the old and the new one.
 *
 * Which bytes are signed. GitHub signs the raw request body. What this replaces, @octokit/webhooks 14 (verify
 * from @octokit/webhooks-methods 6, read in node_modules), decodes the raw body as UTF-8 (a non-fatal
 * TextDecoder) and HMACs that string encoded back to UTF-8, then compares `sha256=` + lowercase hex with the
 * header byte for byte. For a body that is valid UTF-8 without a leading byte order mark, which every JSON body
 * GitHub sends is, those are exactly the raw bytes, and the raw bytes are what is hashed here. The two differ
 * only on invalid UTF-8 or a BOM, where the raw bytes are what the sender signed; the route then refuses
 * invalid UTF-8 as malformed JSON once the signature has been verified. Header forms octokit would not match
 * (upper-case hex, sha1=, wrong length) match nothing here either.
 */
export class SignatureCheck {
  readonly #hmacs: Hmac[];

  constructor(
    secrets: readonly string[],
    private readonly expected: Buffer,
  ) {
    this.#hmacs = secrets.map((secret) => createHmac('sha256', secret));
  }

  update(chunk: Uint8Array): void {
    for (const hmac of this.#hmacs) hmac.update(chunk);
  }

  /** Whether the body fed so far is signed with one of the secrets. Call once, after the last chunk. */
  matches(): boolean {
    let matched = false;
    // Every digest is computed and compared, matched or not.
    for (const hmac of this.#hmacs) {
      const digest = hmac.digest();
      if (digest.length === this.expected.length && timingSafeEqual(digest, this.expected)) matched = true;
    }
    return matched;
  }
}
