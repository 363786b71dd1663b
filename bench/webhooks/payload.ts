import { createHash, createHmac, type Hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// The delivery every request carries: the pull_request.opened example of @octokit/webhooks-examples, its
// REST API links (`*_url` other than `html_url`, `_links`) dropped, and the pull request's description
// padded with ordinary markdown so the body is BODY_BYTES long. Only the pull request number changes from
// one delivery to the next; it is the last key of `pull_request` and of the payload (JSON key order is free),
// so the body is a fixed prefix plus a short tail, and the signature is the HMAC of the prefix, computed
// once, continued with the tail.

export const BODY_BYTES = 8 * 1024;
export const EVENT = 'pull_request';
export const ACTION = 'opened';
/** The number the body is sized with: bodies of 6-digit numbers are exactly BODY_BYTES long. */
const SIZING_NUMBER = 100_000;

interface Example {
  action?: string;
  number?: number;
  pull_request?: Record<string, unknown> & { body?: unknown; number?: number };
  repository?: { full_name?: string };
}

interface Definition {
  name: string;
  examples: Example[];
}

export interface PayloadTemplate {
  /** owner/repo of the example: drydock's github.repositories maps it to a local clone. */
  repository: string;
  /** Everything before the first pull request number. */
  prefix: Buffer;
  /** The rest of the body for pull request `n`. */
  tail(n: number): string;
  body(n: number): Buffer;
  headSha: string;
}

function withoutApiLinks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutApiLinks);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (key === '_links' || (key.endsWith('_url') && key !== 'html_url')) continue;
      out[key] = withoutApiLinks(v);
    }
    return out;
  }
  return value;
}

const DESCRIPTION = [
  '## Summary',
  'This change reworks how the README describes local setup, so a new contributor can get from a fresh',
  'clone to a passing test run without asking in chat. It also fixes two links that pointed at the old wiki.',
  '',
  '## Changes',
  '- Move the prerequisites (Node 20, git, a C toolchain for native modules) to the top of the README.',
  '- Document `npm ci`, `npm test` and `npm run lint`, and what each one checks.',
  '- Replace the screenshots of the settings page with text that survives UI changes.',
  '- Fix the links to the contributing guide and the code of conduct.',
  '',
  '## Testing',
  '- Followed the new instructions on a clean machine (macOS and Ubuntu 24.04).',
  '- `npm test` passes; no code changed.',
  '',
  '## Notes for reviewers',
  'The section on release tagging is unchanged on purpose; it will move to its own document in a follow-up.',
  '',
];

let cached: PayloadTemplate | null = null;

/** Builds the template once per process (reading the 4 MB examples file takes a few tens of ms). */
export function payloadTemplate(): PayloadTemplate {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const file = require.resolve('@octokit/webhooks-examples');
  const definitions = JSON.parse(readFileSync(file, 'utf8')) as Definition[];
  const example = definitions
    .find((d) => d.name === EVENT)
    ?.examples.find((e) => e.action === ACTION && typeof e.pull_request?.body === 'string');
  if (!example?.pull_request || !example.repository?.full_name) {
    throw new Error('@octokit/webhooks-examples has no pull_request.opened example with a text body');
  }
  const { number: _n, pull_request, ...rest } = withoutApiLinks(example) as Required<Example>;
  const { number: _m, ...pr } = pull_request;
  const render = (body: string, n: number) =>
    JSON.stringify({ ...rest, pull_request: { ...pr, body, number: n }, number: n });

  // Pad the description line by line, then to the byte: the body is ASCII, so characters are bytes.
  const lines: string[] = [];
  while (render(lines.join('\r\n'), SIZING_NUMBER).length < BODY_BYTES) {
    lines.push(DESCRIPTION[lines.length % DESCRIPTION.length]!);
  }
  let description = lines.join('\r\n');
  while (description.length && render(description, SIZING_NUMBER).length > BODY_BYTES) {
    description = description.slice(0, -1);
  }
  description += ' '.repeat(BODY_BYTES - render(description, SIZING_NUMBER).length);

  const full = render(description, SIZING_NUMBER);
  const tail = (n: number) => `${n}},"number":${n}}`;
  const prefixText = full.slice(0, full.length - tail(SIZING_NUMBER).length);
  if (prefixText + tail(SIZING_NUMBER) !== full || Buffer.byteLength(full) !== BODY_BYTES) {
    throw new Error('payload template: the number is not at the end of the body');
  }
  const prefix = Buffer.from(prefixText);
  const head = (pr.head as { sha?: unknown } | undefined)?.sha;
  cached = {
    repository: example.repository.full_name,
    prefix,
    tail,
    body: (n) => Buffer.concat([prefix, Buffer.from(tail(n))]),
    headSha: typeof head === 'string' ? head : '',
  };
  return cached;
}

/**
 * X-Hub-Signature-256 for prefix + tail: HMAC-SHA256 = H((K ^ opad) || H((K ^ ipad) || message)), with the
 * inner hash of (K ^ ipad) || prefix computed once and copied for each tail. Checked against createHmac.
 */
export class PrefixSigner {
  private readonly inner: Hash;
  private readonly outerKey: Buffer;

  constructor(
    private readonly secret: string,
    private readonly prefix: Buffer,
  ) {
    let key = Buffer.from(secret);
    if (key.length > 64) key = createHash('sha256').update(key).digest();
    const block = Buffer.alloc(64);
    key.copy(block);
    const ipad = Buffer.from(block.map((b) => b ^ 0x36));
    this.outerKey = Buffer.from(block.map((b) => b ^ 0x5c));
    this.inner = createHash('sha256').update(ipad).update(prefix);
    const probe = '12345},"number":12345}';
    if (this.sign(probe) !== this.slow(probe)) throw new Error('PrefixSigner disagrees with createHmac');
  }

  sign(tail: string): string {
    const inner = this.inner.copy().update(tail).digest();
    return `sha256=${createHash('sha256').update(this.outerKey).update(inner).digest('hex')}`;
  }

  /** The plain HMAC, for the self-check. */
  slow(tail: string): string {
    const h = createHmac('sha256', this.secret).update(this.prefix).update(tail).digest('hex');
    return `sha256=${h}`;
  }
}
