import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What a receiver of drydock's notifications does (src/notify/signature.ts signs): whether `header` is
 * `sha256=` and the hex HMAC-SHA256 of the exact body bytes under `secret`, compared in constant time; false
 * for any malformed header.
 */
export function verifySignature(
  secret: string,
  body: string | Buffer,
  header: string | null | undefined,
): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`, 'utf8');
  const given = Buffer.from(header, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
