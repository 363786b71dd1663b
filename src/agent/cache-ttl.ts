import type { ModelSpec } from '../models/catalogue.js';

/**
 * How long the prompt cache keeps what a request writes. Facts from the prompt-caching page
 * (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "1-hour cache duration", "Mixing
 * different TTLs") and the pricing page, read 2026-12-04:
 * - `cache_control: {type: "ephemeral"}` lives 5 minutes, `{type: "ephemeral", ttl: "1h"}` an hour; each read
 *   refreshes an entry at no cost, so a conversation that keeps talking keeps even a 5-minute entry alive.
 * - A 5-minute write costs 1.25x the base input price, a 1-hour write 2x, a read 0.1x.
 * - One request may mix TTLs, but a longer TTL must come before a shorter one (a 1-hour breakpoint never after
 *   a 5-minute one). Billing: reads up to the highest hit A, 1-hour writes up to the highest 1-hour breakpoint
 *   B after A, 5-minute writes from B to the last breakpoint C.
 *
 * The question is what survives a person. A run that parks (a question, a tool approval, a plan waiting for
 * approval or revision) comes back after minutes or hours with one request that repeats the whole
 * conversation. With 5-minute breakpoints everything has expired by then and the conversation is written again
 * in full; with 1-hour ones it is read at a tenth of the price. But the request whose reply parks the run is
 * sent before anyone knows that reply will park it: the model decides in that very reply. So the TTL is chosen
 * per conversation, by whether any of its turns may end waiting for a person:
 * - plan phase: every turn (AskUserQuestion, or ExitPlanMode: the plan then waits for an approval or a
 *   revision, and a revision continues this conversation);
 * - execute phase in `manual` (every change) and `edits` (every command) mode: every turn that calls a tool.
 * There every breakpoint is written for an hour: the static prefix, the newest message and the one before
 * the newest assistant turn (the last is already cached, a read costs the same at either TTL). 1-hour
 * breakpoints only, so the ordering rule holds trivially. The price is 0.75x base input more on each token
 * written (each turn writes only what it added), against rewriting the whole conversation at 1.25x after
 * each wait of more than 5 minutes; bench/agent-loop measures both.
 * - execute phase in `auto` mode: only a question or a command outside the allow-list waits for a person, so
 *   the conversation keeps 5-minute breakpoints, as does any model that does not take the 1-hour TTL.
 */
export type CacheTtl = '5m' | '1h';

/** The TTL of each kind of breakpoint a request carries (see request.ts). */
export interface CacheTtls {
  /** End of the static prefix (tools, then system). */
  prefix: CacheTtl;
  /** The message before the newest assistant turn, and the newest message. */
  messages: CacheTtl;
}

export const FIVE_MINUTES: CacheTtls = { prefix: '5m', messages: '5m' };

/** What a conversation's turns may end in: waiting for a person on any turn, or only now and then. */
export type Waits = 'any_turn' | 'seldom';

export function cacheTtls(model: Pick<ModelSpec, 'cache_ttl_1h'>, waits: Waits): CacheTtls {
  if (!model.cache_ttl_1h || waits === 'seldom') return FIVE_MINUTES;
  return { prefix: '1h', messages: '1h' };
}

/** The `cache_control` value for a TTL: the default 5 minutes is sent as the API's default, with no `ttl`. */
export function cacheControl(ttl: CacheTtl): { type: 'ephemeral'; ttl?: '1h' } {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}
