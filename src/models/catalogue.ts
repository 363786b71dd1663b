import { DomainError } from '../domain/errors.js';
import { domainsProblem, normalizedDomains } from '../domain/network.js';
import { fromLegacyThinking } from '../domain/thinking.js';
import {
  EFFORTS,
  type Effort,
  type RunDefaults,
  type ThinkingOption,
  type ThinkingType,
} from '../domain/types.js';
import { type Lifecycle, lifecycleMessage, modelState } from './lifecycle.js';

// The model catalogue: what each Claude model accepts and what it costs. The Messages API answers 400 to
// a request that uses a setting the named model does not take, so every request drydock sends is shaped
// from here (agent/request.ts); prices come from here too (pricing.ts). Configuration (`models:`, and the older
// `pricing:`) can override any entry and add new ones.
//
// Sources, read on 2026-11-30 under https://platform.claude.com/docs/en/ (per-model pages, migration guides,
// build-with-claude/thinking, thinking-troubleshooting, preserved-thinking/prefix-checks, prompt-caching,
// effort, about-claude/pricing, model-deprecations, release-notes):
// - Thinking types: Sonnet 5.5 "adaptive" (the default) or "between_tools" (its off: no thinking up front,
//   short notes between tool calls, effort high or below, no other field); Opus 5.5, Fable 5.x and Mythos
//   5.x adaptive only; Haiku 5.5 adaptive or disabled (disabled at effort high or below); Sonnet 5, Opus 5,
//   Opus 4.7/4.8 adaptive or disabled; Opus/Sonnet 4.6 adaptive, enabled (deprecated) or disabled; the 4.5
//   models enabled with budget_tokens (>= 1024, < max_tokens) or disabled. Other types answer 400.
// - Effort (output_config.effort): low/medium/high/xhigh/max from Opus 4.7 on; low/medium/high/max on the
//   4.6 models; low/medium/high on Opus 4.5; none on Sonnet 4.5 and Haiku 4.5.
// - display: "omitted" by default from Opus 4.7 on (thinking text comes back empty), "summarized" before;
//   drydock asks for "summarized" where the model takes the field, so the event log shows the thinking.
// - Max output 128K from the 4.6 generation on, 64K on the 4.5 models. Minimum cacheable prefix: 512 on
//   the 5.x models but Sonnet 5 (1,024); 1,024 on Opus 4.8, Sonnet 4.6, Sonnet 4.5; 2,048 on Opus 4.7;
//   4,096 on Opus 4.6, Opus 4.5, Haiku 4.5 (docs versions disagree for Sonnet 4.6 and Opus 4.7; the
//   October 2026 page is used). Haiku 5.5's is not documented: 512 as for its family.
// - Prefix check (preserved thinking): Fable/Mythos 5.1 and 5.2, Opus 5.5, Sonnet 5.5, Haiku 5.5.
// - On every 4.6-and-later model assistant prefill and non-default sampling answer 400, and on Sonnet 5.5,
//   Opus 5.5 and Fable 5.1 a forced tool_choice too: drydock sends none of them.
// - Prices, USD per million tokens (input / output / 5-min write / 1-h write / cache read): pricing page and
//   model pages; Sonnet 5.5 cache reads cut from 0.20 to 0.10 on 2026-10-07 (release notes); Haiku 5.5
//   charges every token of a request whose prompt (input + cache reads + cache writes) is above 100,000
//   tokens at the higher band (the band rows are from its model page; which tokens count is from price
//   trackers' notes, the pricing page's wording could not be read).
// - 1-hour cache TTL (`cache_control: {type: "ephemeral", ttl: "1h"}`): prompt-caching "1-hour cache duration";
//   the pricing page gives every model above a 1-hour write price (2x base input; 5-minute writes 1.25x,
//   reads 0.1x), so every catalogue model takes it. A model the catalogue does not know is not assumed to.
// - Lifecycle (legacy, deprecated_on, retires_on, replacement; what each state means and what drydock does:
//   models/lifecycle.ts), read 2026-12-04 from about-claude/model-deprecations and each model's page under
//   models/<model>/overview ("Legacy. ... consider migrating to ..." / "Deprecated ... retires on ..."):
//   · Sonnet 4.5: deprecated 2026-09-30, retires 2026-11-30 (its page: "retires on November 30, 2026",
//     replacement Sonnet 5.5; the SDK's deprecated-models list gives the same end of life).
//   · Opus 4.5: deprecated 2026-11-23, retires 2027-01-22 (tentative), replacement Opus 5.5 (deprecations
//     page as read 2026-11-30, and the SDK's deprecated-models list; the localized model pages still say
//     "Legacy", an older snapshot).
//   · Legacy, with the replacement each page names: Haiku 4.5 (Haiku 5.5), Sonnet 4.6 and Sonnet 5 (Sonnet
//     5.5), Opus 4.6, Opus 4.8 and Opus 5 (Opus 5.5; Opus 5's retirement "not sooner than 2027-07-24"),
//     Fable 5 (Fable 5.1).
//   · Retired: Opus 4 and Sonnet 4 on 2026-06-15 (deprecated 2026-04-14; release notes), Opus 4.1 on
//     2026-08-05 (deprecated 2026-06-05, when the SDKs marked it). The replacement named here is the current
//     model of each family (the notices of the day named Opus 4.8 and Sonnet 4.6, both legacy now).
//   · Active: the 5.5 models, Fable/Mythos 5.1 and 5.2. Opus 4.7 and Mythos 5: no current page of theirs
//     was found; left active (Opus 4.8 and 4.6 on either side of Opus 4.7 are legacy).
//   The catalogue once listed Haiku 4.5 as active: its page says legacy, and the docs win.
// See docs/models.md for the table in prose.

// The legacy-shape reader moved to the domain (the API contract and the config share it).

/** A thinking option as stored, whichever shape it was stored in; undefined when unset or unreadable. */
export function readThinkingOption(v: unknown): ThinkingOption | undefined {
  if (v === 'off' || v === 'adaptive') return v;
  if (v && typeof v === 'object') {
    const o = v as { enabled?: unknown; budget_tokens?: unknown };
    if (typeof o.enabled === 'boolean') {
      return fromLegacyThinking({
        enabled: o.enabled,
        ...(typeof o.budget_tokens === 'number' ? { budget_tokens: o.budget_tokens } : {}),
      });
    }
    if (typeof o.budget_tokens === 'number') return { budget_tokens: o.budget_tokens };
  }
  return undefined;
}

// The catalogue sits below the configuration (config/schema.ts validates the configured model with it), so
// it names what it reads of the configuration in its own types; the configuration's schema produces values
// of these shapes, and the compiler holds the two together where config/schema.ts calls modelProblems.

/** Prices in USD per million tokens (`models.<id>.price`, `pricing.<id>` in the configuration). */
export interface ModelPrice {
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
}

/** `models.<id>` in the configuration: overrides a catalogue entry field by field. */
export type ModelSettings = Partial<
  Pick<
    ModelSpec,
    | 'thinking'
    | 'efforts'
    | 'display'
    | 'off_max_effort'
    | 'max_output_tokens'
    | 'min_cacheable_tokens'
    | 'prefix_check'
    | 'cache_ttl_1h'
    | 'price'
    | 'long_prompt'
  >
> & {
  // Lifecycle overrides; null clears what the catalogue says (a deployment that keeps serving a model).
  [K in keyof Lifecycle]?: Lifecycle[K] | null;
};

/** What the catalogue reads of the configuration. */
export interface ModelConfig {
  models: Record<string, ModelSettings>;
  pricing: Record<string, ModelPrice>;
}

export interface PriceBand {
  /** The band applies to a request whose prompt (input + cache reads + cache writes) exceeds this. */
  above_prompt_tokens: number;
  price: ModelPrice;
}

export interface ModelSpec extends Lifecycle {
  id: string;
  /** Dated snapshot ids and other names that mean this model. */
  aliases: string[];
  /** The thinking.type values the API accepts for this model; empty: never send `thinking`. */
  thinking: ThinkingType[];
  /** Whether output_config.effort is accepted, and which levels. Empty: never send it. */
  efforts: Effort[];
  /** Whether thinking.display is accepted. */
  display: boolean;
  /** With thinking off (between_tools, disabled), the highest effort the model takes. */
  off_max_effort?: Effort;
  max_output_tokens: number;
  /** A cached prefix shorter than this is silently never cached. */
  min_cacheable_tokens: number;
  /** Thinking blocks sent back must keep their prefix byte-for-byte (preserved thinking). */
  prefix_check: boolean;
  /** `cache_control.ttl: "1h"` is accepted (agent/cache-ttl.ts uses it where a run may wait for a person). */
  cache_ttl_1h: boolean;
  price: ModelPrice;
  long_prompt?: PriceBand;
}

const p = (input: number, output: number, w5: number, w1: number, read: number): ModelPrice => ({
  input,
  output,
  cache_write_5m: w5,
  cache_write_1h: w1,
  cache_read: read,
});

const ALL: Effort[] = [...EFFORTS];
const A: ThinkingType[] = ['adaptive'];
const AD: ThinkingType[] = ['adaptive', 'disabled'];
const ED: ThinkingType[] = ['enabled', 'disabled'];

type Entry = Omit<ModelSpec, 'aliases'> & Partial<Pick<ModelSpec, 'aliases'>>;

function m(entry: Entry): ModelSpec {
  return { aliases: [], ...entry };
}

/** The 5.x models with preserved thinking. */
const PRESERVED = {
  efforts: ALL,
  display: true,
  max_output_tokens: 128_000,
  min_cacheable_tokens: 512,
  prefix_check: true,
  cache_ttl_1h: true,
};
/** Later 4.x and the 5.x models without the prefix check. */
const MODERN = {
  efforts: ALL,
  display: true,
  max_output_tokens: 128_000,
  prefix_check: false,
  cache_ttl_1h: true,
};
const FOUR_FIVE = { display: false, max_output_tokens: 64_000, prefix_check: false, cache_ttl_1h: true };
const OPUS_4X = p(5, 25, 6.25, 10, 0.5);
const FABLE = p(10, 50, 12.5, 20, 0.25);

const BUILT_IN: ModelSpec[] = [
  m({
    id: 'claude-sonnet-5-5',
    thinking: ['adaptive', 'between_tools'],
    ...PRESERVED,
    off_max_effort: 'high',
    price: p(2, 10, 2.5, 4, 0.1),
  }),
  m({ id: 'claude-opus-5-5', thinking: A, ...PRESERVED, price: p(4, 20, 5, 8, 0.2) }),
  m({
    id: 'claude-haiku-5-5',
    thinking: AD,
    ...PRESERVED,
    off_max_effort: 'high',
    price: p(0.1, 0.5, 0.125, 0.2, 0.01),
    long_prompt: { above_prompt_tokens: 100_000, price: p(0.5, 2.5, 0.625, 1, 0.05) },
  }),
  m({ id: 'claude-fable-5-2', thinking: A, ...PRESERVED, price: p(8, 40, 10, 16, 0.2) }),
  m({ id: 'claude-mythos-5-2', thinking: A, ...PRESERVED, price: p(8, 40, 10, 16, 0.2) }),
  m({ id: 'claude-fable-5-1', thinking: A, ...PRESERVED, price: FABLE }),
  m({ id: 'claude-mythos-5-1', thinking: A, ...PRESERVED, price: FABLE }),
  m({
    id: 'claude-fable-5',
    thinking: A,
    ...MODERN,
    min_cacheable_tokens: 512,
    price: p(10, 50, 12.5, 20, 1),
    legacy: true,
    replacement: 'claude-fable-5-1',
  }),
  m({
    id: 'claude-mythos-5',
    thinking: A,
    ...MODERN,
    min_cacheable_tokens: 512,
    price: p(10, 50, 12.5, 20, 1),
  }),
  m({
    id: 'claude-sonnet-5',
    thinking: AD,
    ...MODERN,
    min_cacheable_tokens: 1024,
    price: p(2, 10, 2.5, 4, 0.2),
    legacy: true,
    replacement: 'claude-sonnet-5-5',
  }),
  m({
    id: 'claude-opus-5',
    thinking: AD,
    ...MODERN,
    off_max_effort: 'high',
    min_cacheable_tokens: 512,
    price: OPUS_4X,
    legacy: true,
    replacement: 'claude-opus-5-5',
  }),
  m({
    id: 'claude-opus-4-8',
    thinking: AD,
    ...MODERN,
    min_cacheable_tokens: 1024,
    price: OPUS_4X,
    legacy: true,
    replacement: 'claude-opus-5-5',
  }),
  m({ id: 'claude-opus-4-7', thinking: AD, ...MODERN, min_cacheable_tokens: 2048, price: OPUS_4X }),
  m({
    id: 'claude-opus-4-6',
    thinking: ['adaptive', 'enabled', 'disabled'],
    ...MODERN,
    efforts: ['low', 'medium', 'high', 'max'],
    min_cacheable_tokens: 4096,
    price: OPUS_4X,
    legacy: true,
    replacement: 'claude-opus-5-5',
  }),
  m({
    id: 'claude-sonnet-4-6',
    thinking: ['adaptive', 'enabled', 'disabled'],
    ...MODERN,
    efforts: ['low', 'medium', 'high', 'max'],
    min_cacheable_tokens: 1024,
    price: p(3, 15, 3.75, 6, 0.3),
    legacy: true,
    replacement: 'claude-sonnet-5-5',
  }),
  m({
    id: 'claude-opus-4-5',
    aliases: ['claude-opus-4-5-20251101'],
    thinking: ED,
    efforts: ['low', 'medium', 'high'],
    ...FOUR_FIVE,
    min_cacheable_tokens: 4096,
    price: OPUS_4X,
    deprecated_on: '2026-11-23',
    retires_on: '2027-01-22',
    replacement: 'claude-opus-5-5',
  }),
  m({
    id: 'claude-sonnet-4-5',
    aliases: ['claude-sonnet-4-5-20250929'],
    thinking: ED,
    efforts: [],
    ...FOUR_FIVE,
    min_cacheable_tokens: 1024,
    price: p(3, 15, 3.75, 6, 0.3),
    deprecated_on: '2026-09-30',
    retires_on: '2026-11-30',
    replacement: 'claude-sonnet-5-5',
  }),
  m({
    id: 'claude-haiku-4-5',
    aliases: ['claude-haiku-4-5-20251001'],
    thinking: ED,
    efforts: [],
    ...FOUR_FIVE,
    min_cacheable_tokens: 4096,
    price: p(1, 5, 1.25, 2, 0.1),
    legacy: true,
    replacement: 'claude-haiku-5-5',
  }),
  retired('claude-opus-4-1', ['claude-opus-4-1-20250805'], ['2026-06-05', '2026-08-05'], 'claude-opus-5-5', {
    price: p(15, 75, 18.75, 30, 1.5),
  }),
  retired(
    'claude-opus-4',
    ['claude-opus-4-0', 'claude-opus-4-20250514'],
    ['2026-04-14', '2026-06-15'],
    'claude-opus-5-5',
    { price: p(15, 75, 18.75, 30, 1.5) },
  ),
  retired(
    'claude-sonnet-4',
    ['claude-sonnet-4-0', 'claude-sonnet-4-20250514'],
    ['2026-04-14', '2026-06-15'],
    'claude-sonnet-5-5',
    { price: p(3, 15, 3.75, 6, 0.3) },
  ),
];

/** A model that no longer answers: kept so that a person naming it is told what to use instead. */
function retired(
  id: string,
  aliases: string[],
  [deprecated_on, retires_on]: [string, string],
  replacement: string,
  { price }: { price: ModelPrice },
): ModelSpec {
  return m({
    id,
    aliases,
    thinking: [],
    efforts: [],
    display: false,
    max_output_tokens: 32_000,
    min_cacheable_tokens: 1024,
    prefix_check: false,
    cache_ttl_1h: false,
    price,
    deprecated_on,
    retires_on,
    replacement,
  });
}

/** A model drydock knows nothing about: sent as named, with no thinking or effort knobs. */
function unknownModel(id: string, price: ModelPrice | undefined): ModelSpec & { known: false } {
  return {
    id,
    aliases: [],
    thinking: [],
    efforts: [],
    display: false,
    max_output_tokens: Number.MAX_SAFE_INTEGER,
    min_cacheable_tokens: 1024,
    prefix_check: false,
    // Not known to take the 1-hour TTL: every breakpoint stays at the default 5 minutes (models.<id>.cache_ttl_1h).
    cache_ttl_1h: false,
    price: price ?? p(0, 0, 0, 0, 0),
    known: false,
  };
}

export type ResolvedModel = ModelSpec & { known: boolean; priced: boolean };

/**
 * The catalogue entry for a model id or alias, with configuration applied: `models.<id>` overrides any
 * field (or describes a new model), `pricing.<id>` overrides the price.
 */
export function findModel(config: ModelConfig, id: string): ResolvedModel {
  const builtIn = BUILT_IN.find((m) => m.id === id || m.aliases.includes(id));
  const key = builtIn?.id ?? id;
  const override: ModelSettings | undefined = config.models[id] ?? config.models[key];
  const price = config.pricing[id] ?? config.pricing[key] ?? override?.price;
  if (!builtIn && !override) {
    return { ...unknownModel(id, price), priced: price !== undefined };
  }
  const base: ModelSpec = builtIn ? structuredClone(builtIn) : unknownModel(id, price);
  const merged = { ...base, ...stripUndefined(override ?? {}), id: key, aliases: base.aliases };
  // null in `models.<id>` clears a lifecycle field of the catalogue's.
  for (const field of LIFECYCLE_FIELDS) if (merged[field] === null) delete merged[field];
  if (price) merged.price = price;
  return { ...(merged as ModelSpec), known: true, priced: builtIn !== undefined || price !== undefined };
}

const LIFECYCLE_FIELDS = ['legacy', 'deprecated_on', 'retires_on', 'replacement'] as const;

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export interface ModelProblems {
  errors: string[];
  warnings: string[];
  /** Said once at start and by doctor, no more (a legacy model still answers). */
  notes: string[];
}

/**
 * Problems and warnings about a model a configuration or a session names, at `now`: its lifecycle
 * (models/lifecycle.ts: retired is an error, deprecated or retiring a warning, legacy a note) and its price.
 */
export function modelProblems(config: ModelConfig, id: string, now: number): ModelProblems {
  const said = lifecycleMessage(id, modelState(findModel(config, id), now));
  const price = modelPriceProblems(config, id);
  return {
    errors: [...(said?.level === 'error' ? [said.text] : []), ...price.errors],
    warnings: [...(said?.level === 'warning' ? [said.text] : []), ...price.warnings],
    notes: said?.level === 'note' ? [said.text] : [],
  };
}

/**
 * What /readyz says of a model at `now`: only what needs doing soon (retiring within 30 days) or at once
 * (retired since the daemon started; its runs fail without a request).
 */
export function modelLifecycleWarnings(config: ModelConfig, id: string, now: number): string[] {
  const state = modelState(findModel(config, id), now);
  if (state.state !== 'retiring' && state.state !== 'retired') return [];
  const said = lifecycleMessage(id, state);
  return said ? [said.text] : [];
}

/** The date-free part of modelProblems: a model must have a price (budgets are enforced from it). */
export function modelPriceProblems(
  config: ModelConfig,
  id: string,
): { errors: string[]; warnings: string[] } {
  const m = findModel(config, id);
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!m.priced) {
    errors.push(
      `${id} ${m.known ? 'has' : 'is not in the model catalogue and has'} no price; add models.${id}.price (budgets are enforced from it)`,
    );
  } else if (!m.known) {
    warnings.push(
      `${id} is not in the model catalogue: requests name it as given, with no thinking or effort settings; describe it under models.${id}`,
    );
  }
  return { errors, warnings };
}

/**
 * Run options as a person submitted them; invalid_model when they name a model retired at `now` (the message
 * names its replacement) or one with no price, invalid_request when `network` holds something other than host
 * names (domain/network.ts), which is stored normalized (lower case, each name once, sorted).
 */
export function checkedRunOptions(
  config: ModelConfig,
  options: RunDefaults | undefined,
  now: number,
): RunDefaults {
  if (options?.model !== undefined) {
    const [problem] = modelProblems(config, options.model, now).errors;
    if (problem) throw new DomainError('invalid_model', problem);
  }
  if (Array.isArray(options?.network)) {
    const problem = domainsProblem(options.network);
    if (problem) throw new DomainError('invalid_request', problem);
    return { ...options, network: normalizedDomains(options.network) };
  }
  return options ?? {};
}

export const DEFAULT_THINKING_BUDGET = 4096;
const MIN_THINKING_BUDGET = 1024;

/** The thinking and effort part of a request, as the named model accepts it. */
export interface ThinkingShape {
  thinking?: { type: ThinkingType; budget_tokens?: number; display?: 'summarized' };
  output_config?: { effort: Effort };
  max_tokens: number;
  /** Said in the run's events when the request differs from what was asked. */
  notes: string[];
}

/**
 * Translates what a person asked for (`thinking`, `effort`, `max_tokens`) into what this model accepts:
 * - "off": `disabled` where the model has it, else `between_tools` (no thinking up front, short notes between
 *   tool calls), else adaptive at the lowest effort, with a note.
 * - "adaptive": `adaptive` where accepted, else `enabled` with the default budget.
 * - {budget_tokens}: `enabled` with that budget where accepted, else adaptive, with a note.
 * Thinking is displayed (summarized) where the model takes `display`, so the event log shows it. max_tokens is
 * clamped to the model's output cap and kept above any budget.
 */
export function shapeThinking(
  model: ModelSpec,
  asked: { thinking: ThinkingOption; effort: Effort | null; maxTokens: number },
): ThinkingShape {
  const notes: string[] = [];
  const cap = model.max_output_tokens;
  const maxTokens = Math.min(asked.maxTokens, cap);
  if (maxTokens < asked.maxTokens) notes.push(`max_tokens lowered to ${cap}, the output cap of ${model.id}`);
  const st: Shaping = { model, notes, maxTokens, effort: asked.effort };
  const thinking = chooseThinking(st, asked.thinking);
  if (thinking && model.display && (thinking.type === 'adaptive' || thinking.type === 'enabled')) {
    thinking.display = 'summarized';
  }
  capEffortWithThinkingOff(st, thinking);
  const output_config = effortConfig(st);
  return {
    ...(thinking ? { thinking } : {}),
    ...(output_config ? { output_config } : {}),
    max_tokens: st.maxTokens,
    notes,
  };
}

/** What shapeThinking works on: the model, the notes said so far, and max_tokens and effort as they stand. */
interface Shaping {
  model: ModelSpec;
  notes: string[];
  maxTokens: number;
  effort: Effort | null;
}

/** Each wish goes to the closest thinking type the model accepts, or to none at all (the model's default). */
function chooseThinking(st: Shaping, wish: ThinkingOption): ThinkingShape['thinking'] {
  const { model, notes } = st;
  const accepts = (t: ThinkingType) => model.thinking.includes(t);
  if (model.thinking.length === 0) {
    if (wish !== 'off') notes.push(`${model.id}: no thinking settings are sent to this model`);
    return undefined;
  }
  if (wish === 'off') {
    if (accepts('disabled')) return { type: 'disabled' };
    if (accepts('between_tools')) return { type: 'between_tools' };
    if (accepts('adaptive')) {
      st.effort = model.efforts[0] ?? null;
      notes.push(
        `${model.id} always thinks; thinking "off" runs adaptive thinking at ${st.effort ?? 'its default'} effort`,
      );
      return { type: 'adaptive' };
    }
    return noThinking(st, 'cannot turn thinking off');
  }
  if (wish === 'adaptive') {
    if (accepts('adaptive')) return { type: 'adaptive' };
    if (accepts('enabled')) return budgeted(st, DEFAULT_THINKING_BUDGET);
    return noThinking(st, 'has no adaptive thinking and no thinking budget');
  }
  if (accepts('enabled')) return budgeted(st, wish.budget_tokens);
  if (accepts('adaptive')) {
    notes.push(
      `${model.id} takes no thinking budget; budget_tokens ${wish.budget_tokens} runs adaptive thinking${st.effort ? ` at ${st.effort} effort` : ''} instead`,
    );
    return { type: 'adaptive' };
  }
  return noThinking(st, 'takes no thinking budget');
}

/** Thinking with a budget; the API wants budget_tokens >= 1024 and below max_tokens. */
function budgeted(st: Shaping, budget: number): ThinkingShape['thinking'] {
  const { model, notes } = st;
  const cap = model.max_output_tokens;
  let b = Math.max(MIN_THINKING_BUDGET, budget);
  if (b + 1024 > st.maxTokens) {
    const raised = Math.min(cap, b + 1024);
    if (raised > st.maxTokens) notes.push(`max_tokens raised to ${raised} to stay above the thinking budget`);
    st.maxTokens = raised;
  }
  if (b >= st.maxTokens) {
    b = st.maxTokens - 1024;
    notes.push(`thinking budget lowered to ${b} to stay below the output cap of ${model.id} (${cap})`);
  }
  return { type: 'enabled', budget_tokens: b };
}

function noThinking(st: Shaping, why: string): undefined {
  st.notes.push(`${st.model.id} ${why}; no thinking setting is sent`);
  return undefined;
}

/**
 * With thinking off some models take effort up to a level only (Sonnet 5.5 between_tools, Haiku 5.5 and
 * Opus 5 disabled: high).
 */
function capEffortWithThinkingOff(st: Shaping, thinking: ThinkingShape['thinking']): void {
  const { model, effort } = st;
  const offCap = model.off_max_effort;
  if (
    offCap &&
    (thinking?.type === 'between_tools' || thinking?.type === 'disabled') &&
    effort &&
    EFFORTS.indexOf(effort) > EFFORTS.indexOf(offCap)
  ) {
    st.notes.push(
      `${model.id} takes effort ${offCap} at most with thinking off; ${offCap} is used instead of ${effort}`,
    );
    st.effort = offCap;
  }
}

/** The effort asked for, or the closest one the model has; none when nothing was asked or it takes none. */
function effortConfig({ model, notes, effort }: Shaping): ThinkingShape['output_config'] {
  if (!effort) return undefined;
  if (model.efforts.includes(effort)) return { effort };
  if (model.efforts.length > 0) {
    const highest = model.efforts[model.efforts.length - 1]!;
    const chosen = effort === 'xhigh' || effort === 'max' ? highest : model.efforts[0]!;
    notes.push(`${model.id} has no ${effort} effort; ${chosen} is used`);
    return { effort: chosen };
  }
  notes.push(`${model.id} takes no effort setting; effort ${effort} is not sent`);
  return undefined;
}

/** The price of one request: the long-prompt band when the prompt is above its threshold. */
export function priceFor(model: Pick<ModelSpec, 'price' | 'long_prompt'>, promptTokens: number): ModelPrice {
  const band = model.long_prompt;
  return band && promptTokens > band.above_prompt_tokens ? band.price : model.price;
}
