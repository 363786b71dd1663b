/**
 * Prompt-cache accounting of the model server, after https://platform.claude.com/docs/en/build-with-claude/prompt-caching :
 * each `cache_control` breakpoint caches the prompt prefix up to and including its block; a later request reads
 * the longest prefix written before that is still live and ends within the lookback window of one of its own
 * breakpoints; tokens from there to the last breakpoint are written; the rest is plain input. A prefix shorter
 * than the model's minimum cacheable length is never written. Reads refresh an entry's TTL (its own: "5m" or
 * "1h", the marker's `ttl` when it was written). Billing of a request that mixes TTLs, after the page's "Mixing
 * different TTLs": A = tokens up to the highest hit (read), B = the highest 1-hour breakpoint after A (1-hour
 * writes: B - A), C = the last breakpoint (5-minute writes: C - B); the contract (model-contract.ts) has
 * already refused a 1-hour breakpoint after a 5-minute one, so walking the breakpoints in order bills exactly
 * that.
 *
 * The only state is the map of written prefixes (hash → expiry); the time comes in as an argument.
 */
import { type CacheTtl, type Prompt, tokensOf } from './model-prompt.js';

/** Positions checked per breakpoint: the breakpoint's own block and the 19 before it. */
export const LOOKBACK_BLOCKS = 20;

export const TTL_MS: Record<CacheTtl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

export interface Breakpoint {
  /** Element index in the prompt. */
  at: number;
  ttl: CacheTtl;
}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Explicit markers, plus the top-level `cache_control` (automatic caching) on the last block. */
export function breakpointsOf(prompt: Prompt, body: any): Breakpoint[] {
  const out: Breakpoint[] = [];
  for (const [at, el] of prompt.elements.entries()) if (el.breakpoint) out.push({ at, ttl: el.breakpoint });
  const auto = body?.cache_control;
  const last = prompt.elements.length - 1;
  if (auto && typeof auto === 'object' && last >= 0 && out.at(-1)?.at !== last) {
    out.push({ at: last, ttl: auto.ttl === '1h' ? '1h' : '5m' });
  }
  return out;
}

export class PromptCache {
  private readonly entries = new Map<string, { expiresAt: number; ttlMs: number }>();

  /** Number of live entries at `now` (for tests of the stand-in itself). */
  size(now: number): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.expiresAt > now) n++;
    return n;
  }

  /**
   * Splits the prompt's tokens into read / written / plain input and records what this request writes.
   * `model` keys the cache (entries are per model); `minTokens` is the model's minimum cacheable prefix.
   */
  account(
    model: string,
    prompt: Prompt,
    breakpoints: Breakpoint[],
    minTokens: number,
    now: number,
  ): CacheUsage {
    const tokensAt = (i: number): number => (i < 0 ? 0 : tokensOf(prompt.ends[i]!));
    const total = Math.max(1, tokensAt(prompt.elements.length - 1));
    const key = (i: number): string => `${model}\n${prompt.hashes[i]!}`;
    const live = (i: number): boolean => {
      const e = this.entries.get(key(i));
      if (!e) return false;
      if (e.expiresAt <= now) {
        this.entries.delete(key(i));
        return false;
      }
      return true;
    };

    let readAt = -1;
    for (const bp of breakpoints) {
      for (let i = bp.at; i >= 0 && i > bp.at - LOOKBACK_BLOCKS; i--) {
        if (i <= readAt) break;
        if (live(i)) {
          readAt = i;
          break;
        }
      }
    }
    if (readAt >= 0) {
      const hit = this.entries.get(key(readAt))!;
      hit.expiresAt = now + hit.ttlMs;
    }

    const creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    let cachedTo = readAt;
    for (const bp of breakpoints) {
      if (tokensAt(bp.at) < minTokens) continue;
      if (bp.at <= cachedTo) {
        // Inside what was read: nothing is written or billed. A live entry there keeps its own TTL (a 5-minute
        // marker never shortens a 1-hour entry, a 1-hour marker never lengthens a 5-minute one) and is
        // refreshed as part of the read; a position not cached yet is cached with the marker's TTL, free.
        const there = live(bp.at) ? this.entries.get(key(bp.at))! : null;
        if (there) there.expiresAt = Math.max(there.expiresAt, now + there.ttlMs);
        else this.entries.set(key(bp.at), { expiresAt: now + TTL_MS[bp.ttl], ttlMs: TTL_MS[bp.ttl] });
        continue;
      }
      this.entries.set(key(bp.at), { expiresAt: now + TTL_MS[bp.ttl], ttlMs: TTL_MS[bp.ttl] });
      const written = tokensAt(bp.at) - tokensAt(cachedTo);
      if (bp.ttl === '1h') creation.ephemeral_1h_input_tokens += written;
      else creation.ephemeral_5m_input_tokens += written;
      cachedTo = bp.at;
    }
    const read = tokensAt(readAt);
    const written = creation.ephemeral_5m_input_tokens + creation.ephemeral_1h_input_tokens;
    return {
      input_tokens: total - read - written,
      cache_creation_input_tokens: written,
      cache_read_input_tokens: read,
      cache_creation: creation,
    };
  }
}
