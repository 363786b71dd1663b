/**
 * Thinking-block signatures of the model server. A signature binds a thinking block to the model that wrote
 * it, to the hash of the prompt prefix it was written after (see model-prompt.ts) and to its own thinking
 * text, under an HMAC with a key made once per test process. So the check is stateless: a block sent back is
 * valid exactly when its signature verifies and the prefix in front of it hashes to the same value again.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 } from './model-prompt.js';

// Per process, not per server: a conversation may outlive one server instance in a test.
const KEY = randomBytes(32);

export interface ThinkingSeal {
  /** The model that wrote the block. */
  model: string;
  /** Hash of the prompt prefix in front of the block when it was written. */
  prefix: string;
  /** sha256 of the block's thinking text as returned. */
  text: string;
  /** Digests of `tools` and `system` at the time, to name what changed when the prefix differs. */
  tools: string;
  system: string;
}

function mac(seal: ThinkingSeal): Buffer {
  const fields = [seal.model, seal.prefix, seal.text, seal.tools, seal.system];
  return createHmac('sha256', KEY).update(fields.join('\n')).digest();
}

export function signThinking(seal: Omit<ThinkingSeal, 'text'>, thinking: string): string {
  const full: ThinkingSeal = { ...seal, text: sha256(thinking) };
  const payload = { v: 1, ...full, mac: mac(full).toString('base64') };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

/** The seal inside `signature`, or null when it is not a signature this process made (garbled, forged). */
export function readSignature(signature: unknown): ThinkingSeal | null {
  if (typeof signature !== 'string' || signature === '') return null;
  let payload: any;
  try {
    payload = JSON.parse(Buffer.from(signature, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (payload?.v !== 1) return null;
  const { model, prefix, text, tools, system } = payload;
  for (const field of [model, prefix, text, tools, system, payload.mac]) {
    if (typeof field !== 'string') return null;
  }
  const seal: ThinkingSeal = { model, prefix, text, tools, system };
  const expected = mac(seal);
  const given = Buffer.from(payload.mac, 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return seal;
}
