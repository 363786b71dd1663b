/**
 * The model server's own per-model request contract, written from Anthropic's documentation as read on
 * 2026-11-30 (API version 2026-10-21, `@anthropic-ai/sdk` 1.14). Deliberately independent of drydock's model
 * catalogue in src/: it is the check on that catalogue, so it must not import it.
 *
 * Doc URLs (all under https://platform.claude.com/docs/en/):
 *   [models]       models/overview — IDs, max output, retirement
 *   [troubleshoot] build-with-claude/thinking-troubleshooting — accepted/rejected thinking.type per model
 *   [thinking]     build-with-claude/thinking — display defaults, `updates`
 *   [effort]       build-with-claude/effort — effort levels and defaults
 *   [caching]      build-with-claude/prompt-caching — minimum cacheable prompt, 4 breakpoints, 20-block lookback,
 *                  TTLs "5m" (default) and "1h", a longer TTL before a shorter one, reads refresh an entry
 *   [pricing]      about-claude/pricing — 5-minute writes 1.25x base input, 1-hour writes 2x, reads 0.1x
 *   [preserved]    build-with-claude/preserved-thinking (+ /prefix-checks) — which models run the prefix check
 *   [midsystem]    build-with-claude/mid-conversation-system-messages
 *   [s55-new]      models/sonnet-5-5/whats-new-sonnet-5-5, [s55-mig] models/sonnet-5-5/migration-guide
 *   [o55-new]      models/opus-5-5/whats-new-opus-5-5
 *   [h55]          models/haiku-5-5/{overview,whats-new-haiku-5-5,migration-guide}
 *   [versioning]   api/versioning — sampling parameters removed under 2026-10-21
 *   [deprecations] about-claude/model-deprecations (read 2026-12-04) — retirement dates, what retired means
 * Facts marked [3p] come from third-party captures of the live API, not from Anthropic's pages.
 */

export type ThinkingType = 'adaptive' | 'enabled' | 'disabled' | 'between_tools';
export type Effort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export type Display = 'summarized' | 'omitted';

export const ALL_EFFORTS: Effort[] = ['low', 'medium', 'high', 'xhigh', 'max'];
const NO_XHIGH: Effort[] = ['low', 'medium', 'high', 'max'];

export interface ModelRules {
  id: string;
  /** Other IDs that resolve to this model (dated snapshots). */
  aliases?: string[];
  /** `thinking.type` values accepted; any other is a 400. */
  thinking: ThinkingType[];
  /** What a request without `thinking` gets. */
  thinkingWhenOmitted: 'adaptive' | 'off';
  /** Text of the 400 for `{"type":"disabled"}` when the model refuses it (differs per model). */
  disabledRefusal?: string;
  /** `output_config.effort` levels accepted; empty: the effort parameter itself is refused. */
  efforts: Effort[];
  /** Thinking off (`between_tools`, or `disabled` here) only at effort ≤ this; undefined: no such limit. */
  maxEffortWithThinkingOff?: Effort;
  /** `thinking.display` when the request does not say. */
  displayDefault: Display;
  /** Largest `max_tokens` (synchronous API). */
  maxOutput: number;
  /** Shortest prompt prefix (tokens) that is ever cached. */
  minCacheTokens: number;
  /** Thinking blocks sent back are checked against the prefix they were produced after. */
  prefixCheck: boolean;
  /** Models whose thinking blocks this model reads (its own always); others are dropped silently. */
  readsThinkingFrom?: string[];
  /**
   * Sampling parameters under API version 2023-06-01 (under 2026-10-21 they are gone on every model):
   * `removed`: non-default values refused; `exclusive`: accepted, but not `temperature` and `top_p` together;
   * `haiku-5-5`: temperature 1 only, top_p 0.99 only, no top_k, never both.
   */
  sampling: 'removed' | 'exclusive' | 'haiku-5-5';
  /** A final assistant message (prefill) is accepted. */
  prefill: boolean;
  /** `tool_choice` `any`/`tool`: refused, accepted, or accepted unless thinking is `enabled`. */
  forcedToolChoice: 'refused' | 'accepted' | 'not-with-enabled';
  /** With thinking on, text written before a tool call comes back as a thinking block. */
  betweenToolText: boolean;
  /** `role: "system"` entries inside `messages` are accepted. */
  midConversationSystem: boolean;
  /**
   * `cache_control.ttl: "1h"` is accepted. [caching] and [pricing] list a 1-hour cache-write price for every
   * current model on the Claude API; Vertex AI's Claude page names older models without it (3.x Sonnet and
   * Opus), so the rule is per model.
   */
  cacheTtl1h: boolean;
  /**
   * Retirement date (YYYY-MM-DD, from the start of the day UTC). From then on the API answers the same 404 as
   * for an unknown ID ([deprecations]: requests to models past the retirement date fail; the body is
   * `not_found_error` `model: <id>`, as for an unknown ID: [3p] captures of the live API's 404).
   */
  retiresOn?: string;
}

// [troubleshoot], [o55-new]: the refusal text for "disabled" on always-adaptive models.
const DISABLED_USE_ADAPTIVE =
  '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
// [s55-mig]: Sonnet 5.5 points at between_tools instead.
const DISABLED_USE_BETWEEN_TOOLS =
  'To turn thinking off on this model, send "thinking": {"type": "between_tools"} instead of {"type": "disabled"}. The model does not think before responding. The short updates it writes between tool calls come back as thinking blocks.';

const FIVE_FIVE_FAMILY: Omit<ModelRules, 'id'> = {
  thinking: ['adaptive'],
  thinkingWhenOmitted: 'adaptive',
  disabledRefusal: DISABLED_USE_ADAPTIVE,
  efforts: ALL_EFFORTS,
  displayDefault: 'omitted', // [thinking]: omitted on Fable/Mythos 5.x, Opus 5/5.5, Sonnet 5/5.5, Opus 4.7/4.8, Haiku 5.5
  maxOutput: 128_000, // [models]
  minCacheTokens: 512, // [caching]
  prefixCheck: true, // [preserved]: supportedModels fable-5-2, mythos-5-2, fable-5-1, mythos-5-1, opus-5-5, sonnet-5-5, haiku-5-5
  sampling: 'removed', // [s55-mig], [o55-new]
  prefill: false, // [s55-mig]: refused on every 4.6-and-later model
  forcedToolChoice: 'refused', // [s55-new], [o55-new]: Sonnet 5.5, Opus 5.5, Fable 5.1, Mythos 5.1
  betweenToolText: true, // [thinking]: Sonnet 5.5, Opus 5.5 and Fable 5.x
  midConversationSystem: true, // [midsystem], [s55-new], [o55-new]
  cacheTtl1h: true, // [caching] "1-hour cache duration", [pricing] 1h cache writes
};

const LATER_5: Omit<ModelRules, 'id'> = {
  ...FIVE_FIVE_FAMILY,
  prefixCheck: false, // [preserved]: models before Fable 5.1 don't run the check
  forcedToolChoice: 'accepted', // [troubleshoot]
  betweenToolText: false,
};

const FOUR_SIX: Omit<ModelRules, 'id'> = {
  // [troubleshoot]: adaptive, enabled (deprecated) and disabled; thinking off when omitted.
  thinking: ['adaptive', 'enabled', 'disabled'],
  thinkingWhenOmitted: 'off',
  efforts: NO_XHIGH, // [effort]
  displayDefault: 'summarized', // [thinking]
  maxOutput: 128_000, // [models]
  minCacheTokens: 4096, // [caching]
  prefixCheck: false,
  sampling: 'exclusive', // [3p] live probe: temperature + top_p together → 400
  prefill: false, // [s55-mig]: "as Claude Sonnet 4.6 and Claude Sonnet 5 do"
  forcedToolChoice: 'not-with-enabled', // [troubleshoot]
  betweenToolText: false,
  midConversationSystem: false, // [midsystem] lists no 4.6 model
  cacheTtl1h: true, // [pricing] 1h cache writes
};

const FOUR_FIVE: Omit<ModelRules, 'id'> = {
  // [troubleshoot]: enabled or disabled; "adaptive thinking is not supported on this model".
  thinking: ['enabled', 'disabled'],
  thinkingWhenOmitted: 'off',
  efforts: [],
  displayDefault: 'summarized', // [thinking]
  maxOutput: 64_000, // [models]
  minCacheTokens: 4096, // [caching]
  prefixCheck: false,
  sampling: 'exclusive', // [3p]
  prefill: true, // [s55-mig]: "Claude Sonnet 4.5, Claude Haiku 4.5, and older models accept one"
  forcedToolChoice: 'not-with-enabled', // [troubleshoot]
  betweenToolText: false,
  midConversationSystem: false,
  cacheTtl1h: true, // [pricing] 1h cache writes
};

export const MODEL_RULES: ModelRules[] = [
  // [s55-new], [s55-mig]: adaptive or between_tools; between_tools only at effort ≤ high; reads blocks of
  // Sonnet 5, Opus 4.8, Haiku 4.5 and earlier ([preserved] "Switching models mid-conversation").
  {
    ...FIVE_FIVE_FAMILY,
    id: 'claude-sonnet-5-5',
    thinking: ['adaptive', 'between_tools'],
    disabledRefusal: DISABLED_USE_BETWEEN_TOOLS,
    maxEffortWithThinkingOff: 'high',
    readsThinkingFrom: [
      'claude-sonnet-5',
      'claude-opus-4-8',
      'claude-haiku-4-5',
      'claude-sonnet-4-6',
      'claude-sonnet-4-5',
    ],
  },
  // [o55-new]: adaptive only ("always on"); default effort medium ([effort]); reads Sonnet 5.5's blocks.
  { ...FIVE_FIVE_FAMILY, id: 'claude-opus-5-5', readsThinkingFrom: ['claude-sonnet-5-5'] },
  // [h55], [troubleshoot]: adaptive or disabled (disabled only at effort ≤ high); forced tool_choice accepted
  // (the response then has no thinking); temperature 1 / top_p 0.99 only; prefill refused even with thinking
  // off. Minimum cacheable prompt not on the pages read: 512 per a [3p] Bedrock gateway config. Text between
  // tool calls as thinking: not stated for Haiku 5.5, so not modelled.
  {
    ...FIVE_FIVE_FAMILY,
    id: 'claude-haiku-5-5',
    thinking: ['adaptive', 'disabled'],
    maxEffortWithThinkingOff: 'high',
    sampling: 'haiku-5-5',
    forcedToolChoice: 'accepted',
    betweenToolText: false,
    midConversationSystem: false, // [midsystem]: Haiku 5.5 not stated
  },
  // [troubleshoot], [preserved]: Fable 5.1 is the first model with the prefix check; reads Opus 5 and Opus 5.5.
  { ...FIVE_FIVE_FAMILY, id: 'claude-fable-5-1', readsThinkingFrom: ['claude-opus-5', 'claude-opus-5-5'] },
  { ...FIVE_FIVE_FAMILY, id: 'claude-mythos-5-1', betweenToolText: false },
  // [preserved], release notes 2026-11-09: Fable/Mythos 5.2 check prefixes on every account. Forced
  // tool_choice, sampling and minimum cache not verified: taken from Fable 5.1.
  { ...FIVE_FIVE_FAMILY, id: 'claude-fable-5-2' },
  { ...FIVE_FIVE_FAMILY, id: 'claude-mythos-5-2', betweenToolText: false },
  // [troubleshoot]: Fable/Mythos 5 adaptive only, no prefix check, forced tool_choice accepted.
  { ...LATER_5, id: 'claude-fable-5', betweenToolText: true },
  { ...LATER_5, id: 'claude-mythos-5' },
  // [troubleshoot]: Sonnet 5 adaptive or disabled, on when omitted; min cache 1024 [caching].
  {
    ...LATER_5,
    id: 'claude-sonnet-5',
    thinking: ['adaptive', 'disabled'],
    minCacheTokens: 1024,
    midConversationSystem: false, // [midsystem]: "not available on Claude Sonnet 5"
  },
  // [troubleshoot]: Opus 5 adaptive or disabled, disabled only at effort ≤ high.
  { ...LATER_5, id: 'claude-opus-5', thinking: ['adaptive', 'disabled'], maxEffortWithThinkingOff: 'high' },
  // [troubleshoot]: Opus 4.8 / 4.7 adaptive or disabled, off when omitted, no budgets.
  {
    ...LATER_5,
    id: 'claude-opus-4-8',
    thinking: ['adaptive', 'disabled'],
    thinkingWhenOmitted: 'off',
    minCacheTokens: 1024, // [caching]
  },
  {
    ...LATER_5,
    id: 'claude-opus-4-7',
    thinking: ['adaptive', 'disabled'],
    thinkingWhenOmitted: 'off',
    minCacheTokens: 2048, // [caching] Oct-2026 version (older versions say 4096)
    midConversationSystem: false,
  },
  { ...FOUR_SIX, id: 'claude-opus-4-6' },
  // [caching] Oct-2026 version: 1024 (other versions say 2048).
  { ...FOUR_SIX, id: 'claude-sonnet-4-6', minCacheTokens: 1024 },
  // [effort]: Opus 4.5 takes low/medium/high. Deprecated; retires 2027-01-22 ([deprecations], SDK DEPRECATED_MODELS).
  {
    ...FOUR_FIVE,
    id: 'claude-opus-4-5',
    aliases: ['claude-opus-4-5-20251101'],
    efforts: ['low', 'medium', 'high'],
    retiresOn: '2027-01-22',
  },
  // Retired 2026-11-30 ([deprecations], its model page, SDK DEPRECATED_MODELS): refused from that day on; the
  // rules stay for a server whose clock is set before it. [3p]: no effort parameter.
  {
    ...FOUR_FIVE,
    id: 'claude-sonnet-4-5',
    aliases: ['claude-sonnet-4-5-20250929'],
    minCacheTokens: 1024,
    retiresOn: '2026-11-30',
  },
  { ...FOUR_FIVE, id: 'claude-haiku-4-5', aliases: ['claude-haiku-4-5-20251001'] },
];

/**
 * Retired on the Claude API ([models], pricing "(retired, except on Bedrock and Google Cloud)"): requests get
 * the same 404 as an unknown ID. Listed so tests can walk them; any ID not in MODEL_RULES is refused anyway.
 */
export const RETIRED_MODELS = [
  'claude-opus-4-1',
  'claude-opus-4-1-20250805',
  'claude-opus-4-0',
  'claude-opus-4-20250514',
  'claude-sonnet-4-0',
  'claude-sonnet-4-20250514',
  'claude-3-7-sonnet-latest',
  'claude-3-7-sonnet-20250219',
  'claude-3-5-haiku-latest',
  'claude-3-5-haiku-20241022',
  'claude-3-haiku-20240307',
  'claude-3-opus-20240229',
  'claude-mythos-preview', // SDK DEPRECATED_MODELS: end of life June 30th, 2026
];

const BY_ID = new Map<string, ModelRules>();
for (const rules of MODEL_RULES) {
  BY_ID.set(rules.id, rules);
  for (const alias of rules.aliases ?? []) BY_ID.set(alias, rules);
}

/** The rules for a model ID or alias at `now`; undefined for unknown IDs and for those retired by then. */
export function rulesFor(model: string, now: number): ModelRules | undefined {
  const rules = BY_ID.get(model);
  if (rules?.retiresOn !== undefined && now >= Date.parse(`${rules.retiresOn}T00:00:00Z`)) return undefined;
  return rules;
}

/** Efforts in increasing order, for "at most" comparisons. */
export function effortRank(e: Effort): number {
  return ALL_EFFORTS.indexOf(e);
}
