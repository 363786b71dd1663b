import type { ApiToken } from '../../domain/types.js';

/**
 * How long a token read from PostgreSQL is trusted before it is read again (ms). A token revoked by another
 * process (`drydock token revoke`, another replica) is refused by this one within this time; one revoked
 * through this store is refused at once.
 */
export const TOKEN_CACHE_MS = 2_000;

/** Tokens kept at most; the oldest entry makes room for a new one. */
const MAX_ENTRIES = 1_000;

/**
 * Tokens found by id, each kept for `ttlMs` after it was read, so that a request does not cost a round trip
 * for its bearer token. Only found rows are kept (an unknown id is read every time), revoked ones included.
 * Times come from `clock`: an entry read at `at` is used while `at <= now < at + ttlMs`.
 */
export class TokenCache {
  private readonly entries = new Map<string, { token: ApiToken; at: number }>();
  /** Moved by every `forget`: a read that began before one is not kept (it may predate a revocation). */
  private generation = 0;

  constructor(
    private readonly clock: () => number,
    private readonly ttlMs = TOKEN_CACHE_MS,
  ) {}

  /** The token read for `id` within the last `ttlMs`, or undefined. */
  get(id: string): ApiToken | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const now = this.clock();
    if (now < entry.at || now - entry.at >= this.ttlMs) {
      this.entries.delete(id);
      return undefined;
    }
    return entry.token;
  }

  /** What a read takes note of before it begins: the clock's time and the generation, for `set`. */
  begin(): { at: number; generation: number } {
    return { at: this.clock(), generation: this.generation };
  }

  /** Keeps `token`, read by a read that began at `read` (`begin`), unless a `forget` came since. */
  set(token: ApiToken, read: { at: number; generation: number }): void {
    if (this.ttlMs <= 0 || read.generation !== this.generation) return;
    const at = read.at;
    this.entries.delete(token.id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token.id, { token, at });
  }

  /** Forgets `id` (it was created or revoked here). */
  forget(id: string): void {
    this.generation += 1;
    this.entries.delete(id);
  }
}
