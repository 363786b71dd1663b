import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../support/signature.js';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  raw: string;
  /** The status the receiver answered. */
  status: number;
  /** Whether X-Drydock-Signature-256 verified under the receiver's secret (null: it has none). */
  signed: boolean | null;
}

export interface Receiver {
  url: string;
  requests: Received[];
  /** Requests whose body has arrived (answered or not yet). */
  arrived(): number;
  /** Bodies of the requests answered 2xx, parsed. */
  accepted(): any[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on loopback that records every request.
 * - `json` (drydock's own format): refuses a bad or missing signature with 401 when it has a secret, then
 *   answers `answer(n)` for the n-th request (1-based; default 200).
 * - `slack`: answers as a Slack incoming webhook does (see src/notify/format.ts for the sources): 400
 *   invalid_payload unless the body is a JSON object sent as application/json, 400 no_text without a
 *   non-empty `text`, 400 invalid_blocks when `blocks` break Slack's documented limits (blockKitProblems),
 *   else 200 "ok" (or `answer(n)` when it says otherwise).
 */
export async function startReceiver(
  opts: {
    kind?: 'json' | 'slack';
    secret?: string;
    answer?: (n: number) => number;
    /** Before answering the n-th request: wait for this (a receiver that is slow to answer). */
    hold?: (n: number) => Promise<void> | undefined;
  } = {},
): Promise<Receiver> {
  const requests: Received[] = [];
  let arrived = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const n = ++arrived;
      await opts.hold?.(n);
      const raw = Buffer.concat(chunks);
      const signed = opts.secret
        ? verifySignature(opts.secret, raw, req.headers['x-drydock-signature-256'] as string | undefined)
        : null;
      const reply = (status: number, text: string) => {
        requests.push({ headers: req.headers, raw: raw.toString('utf8'), status, signed });
        // The sender may be gone by now (killed while waiting): the request counts as received all the same.
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      };
      if (req.method !== 'POST') return reply(405, 'method not allowed');
      if (opts.kind === 'slack') {
        let body: unknown;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return reply(400, 'invalid_payload');
        }
        if (!String(req.headers['content-type']).startsWith('application/json') || typeof body !== 'object') {
          return reply(400, 'invalid_payload');
        }
        const text = (body as { text?: unknown }).text;
        if (typeof text !== 'string' || text.trim() === '') return reply(400, 'no_text');
        const blocks = (body as { blocks?: unknown }).blocks;
        if (blocks !== undefined && blockKitProblems(blocks).length > 0) return reply(400, 'invalid_blocks');
      } else if (signed === false) {
        return reply(401, 'bad signature');
      }
      const status = opts.answer?.(n) ?? 200;
      reply(status, status < 300 ? 'ok' : 'try later');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    arrived: () => arrived,
    accepted: () => requests.filter((r) => r.status < 300).map((r) => JSON.parse(r.raw)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * What breaks Slack's documented Block Kit limits in `blocks` (the kinds drydock sends), [] for none:
 * at most 50 blocks; header: plain_text of at most 150 characters; section: text of 1-3000 characters or
 * fields, at most 10 of at most 2000 characters each; context: 1-10 elements
 * (https://docs.slack.dev/reference/block-kit/blocks/header-block, .../section-block, .../context-block).
 */
export function blockKitProblems(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return ['blocks is not an array'];
  const problems: string[] = [];
  if (blocks.length > 50) problems.push(`${blocks.length} blocks`);
  const textOf = (t: any, kinds: string[]) =>
    t && kinds.includes(t.type) && typeof t.text === 'string' ? (t.text as string) : null;
  blocks.forEach((b: any, i) => {
    if (b?.type === 'header') {
      const t = textOf(b.text, ['plain_text']);
      if (t === null || t.length < 1 || t.length > 150) problems.push(`block ${i}: header text`);
    } else if (b?.type === 'section') {
      const t = b.text === undefined ? undefined : textOf(b.text, ['plain_text', 'mrkdwn']);
      if (t === null || (t !== undefined && (t.length < 1 || t.length > 3000)))
        problems.push(`block ${i}: section text`);
      if (b.fields !== undefined) {
        const f = b.fields as unknown[];
        if (!Array.isArray(f) || f.length < 1 || f.length > 10) problems.push(`block ${i}: fields count`);
        else if (
          f.some(
            (x) =>
              (textOf(x, ['plain_text', 'mrkdwn']) ?? '').length > 2000 ||
              !textOf(x, ['plain_text', 'mrkdwn']),
          )
        )
          problems.push(`block ${i}: a field`);
      }
      if (t === undefined && b.fields === undefined)
        problems.push(`block ${i}: section without text or fields`);
    } else if (b?.type === 'context') {
      const e = b.elements as unknown[];
      if (!Array.isArray(e) || e.length < 1 || e.length > 10) problems.push(`block ${i}: context elements`);
    } else {
      problems.push(`block ${i}: type ${String(b?.type)}`);
    }
  });
  return problems;
}
