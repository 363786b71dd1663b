import type { ConversationMessage } from '../domain/types.js';
import type { ModelSpec } from '../models/catalogue.js';

/**
 * How long the prompt cache keeps what a request writes. Facts, read 2026-12-04, from the prompt-caching page
 * (https://platform.claude.com/docs/en/build-with-claude/prompt-caching: its summary names "5-minute or
 * 1-hour TTLs"; the sections "1-hour cache duration" and "Mixing different TTLs" read in the docs'
 * llms-full.txt copy), its price table (a 1-hour write column for every model) and the SDK's
 * CacheControlEphemeral (`ttl?: '5m' | '1h'`, default 5m):
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
 * There the static prefix is written for an hour (once per conversation), and so is the newest message
 * whenever what it adds to the last 1-hour entry has grown past SPACING_TOKENS (estimated) or SPACING_BLOCKS
 * blocks; otherwise it is written for 5 minutes. A 1-hour write costs 0.75x base input more on what that
 * turn adds; a wait of more than 5 minutes then rewrites only what came after the last 1-hour entry (at most
 * about SPACING_TOKENS, or a single turn when turns are larger) instead of the whole conversation, and the
 * request after the wait finds that entry within the API's 20-block lookback of its breakpoint on the
 * message before the newest assistant turn. The breakpoint on that message takes the newest one's TTL (it
 * is read, never written, so either costs the same), which keeps the ordering rule. bench/agent-loop
 * measures today's policy (every breakpoint 5 minutes) beside this one, with and without a wait.
 * - execute phase in `auto` mode: only a question or a command outside the allow-list waits for a person, so
 *   the conversation keeps 5-minute breakpoints, as does any model that does not take the 1-hour TTL.
 */
export type CacheTtl = '5m' | '1h';

/** The TTL of each kind of breakpoint a request carries (see request.ts). */
export interface CacheTtls {
  /** End of the static prefix (tools, then system), and the last tool both phases share. */
  prefix: CacheTtl;
  /** The message before the newest assistant turn, and the newest message; `spaced`: see spacedTtl. */
  messages: CacheTtl | 'spaced';
}

export const FIVE_MINUTES: CacheTtls = { prefix: '5m', messages: '5m' };

/** What a conversation's turns may end in: waiting for a person on any turn, or only now and then. */
export type Waits = 'any_turn' | 'seldom';

export function cacheTtls(model: Pick<ModelSpec, 'cache_ttl_1h'>, waits: Waits): CacheTtls {
  if (!model.cache_ttl_1h || waits === 'seldom') return FIVE_MINUTES;
  return { prefix: '1h', messages: 'spaced' };
}

/** What the newest message may add to the last 1-hour entry (characters / 4) before it is written for an hour. */
export const SPACING_TOKENS = 2048;
/** The same in blocks: well inside the 20-block lookback, so a request after a wait finds that entry. */
export const SPACING_BLOCKS = 12;

// A conversation's messages are the same objects from turn to turn (the loop appends to its array), so each
// is measured once.
const measured = new WeakMap<ConversationMessage, number>();

/** Characters of the message's JSON / 4: the estimate the spacing is counted in. */
function estimatedTokens(m: ConversationMessage): number {
  let n = measured.get(m);
  if (n === undefined) {
    n = Math.ceil(JSON.stringify(m.content).length / 4);
    measured.set(m, n);
  }
  return n;
}

/**
 * The TTL of the newest message's breakpoint under `spaced`, from the conversation alone: every request's
 * newest message was a user message (or the last one, after a pause_turn), so the decisions of the earlier
 * requests are taken again in order, each from the messages it saw, and the same conversation always gives
 * the same answer.
 */
export function spacedTtl(messages: readonly ConversationMessage[]): CacheTtl {
  let tokens = 0;
  let blocks = 0;
  let ttl: CacheTtl = '5m';
  for (const [i, m] of messages.entries()) {
    tokens += estimatedTokens(m);
    blocks += m.content.length;
    if (m.role !== 'user' && i !== messages.length - 1) continue;
    ttl = tokens > SPACING_TOKENS || blocks >= SPACING_BLOCKS ? '1h' : '5m';
    if (ttl === '1h') {
      tokens = 0;
      blocks = 0;
    }
  }
  return ttl;
}

/** The `cache_control` value for a TTL: the default 5 minutes is sent as the API's default, with no `ttl`. */
export function cacheControl(ttl: CacheTtl): { type: 'ephemeral'; ttl?: '1h' } {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}
