/**
 * The request contract of the model server: the shape every Messages request must have, then the rules of the
 * model it names (model-rules.ts), with the API's error texts (model-errors.ts). Pure: the only outside facts
 * are the request headers and, for a final assistant message, whether it continues a `pause_turn` response.
 *
 * Checks run in the API's order as far as it is known: schema-level errors (unknown fields, bad enum values,
 * budget below 1024) before the model's own refusals, and the thinking-block checks last.
 */
import { breakpointsOf } from './model-cache.js';
import * as E from './model-errors.js';
import { contentBlocks, countBreakpoints, type Prompt, promptOf, sha256 } from './model-prompt.js';
import {
  ALL_EFFORTS,
  type Effort,
  effortRank,
  type ModelRules,
  rulesFor,
  type ThinkingType,
} from './model-rules.js';
import { readSignature } from './model-signature.js';

export type Headers = Record<string, string | string[] | undefined>;

export interface RequestContext {
  /** Request headers (for `anthropic-version` and `anthropic-beta`). */
  headers?: Headers;
  /** Whether a prompt ending at `promptHash` is exactly the end of a `pause_turn` response of `model`. */
  isPauseContinuation?: (model: string, promptHash: string) => boolean;
  /** The server's time, which decides whether a model has retired. Default: `Date.now()`. */
  now?: number;
}

export interface Refusal {
  status: 400 | 404;
  type: 'invalid_request_error' | 'not_found_error';
  message: string;
}

export type ThinkingMode = 'off' | 'adaptive' | 'enabled' | 'between_tools';
export type DisplayMode = 'summarized' | 'omitted' | 'updates';

export interface InputTransformation {
  type: 'thinking_dropped';
  path: string;
  reason: 'prefix_binding_mismatch' | 'model_binding_mismatch';
}

/** What the server needs to answer an accepted request. */
export interface AcceptedRequest {
  rules: ModelRules;
  /** The prompt as sent (response blocks are hashed after it). */
  prompt: Prompt;
  /** The prompt without dropped thinking blocks (what is billed and cached). */
  billedPrompt: Prompt;
  /** How the model thinks for this request. */
  thinking: ThinkingMode;
  /** False when thinking is on but a forced tool_choice suppresses it (the response then has none). */
  thinkingInResponse: boolean;
  display: DisplayMode;
  /** Index of the message the response continues (a final assistant message), or null for a new one. */
  continues: number | null;
  inputTransformations: InputTransformation[];
  /** The request sent `anthropic-beta: thinking-binding-controls-2026-08-01`. */
  bindingBeta: boolean;
}

export const BETA_BINDING = 'thinking-binding-controls-2026-08-01';
export const BETA_DISPLAY_UPDATES = 'thinking-display-updates-2026-08-18';

function header(headers: Headers | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v.join(',') : v;
}

function betas(headers: Headers | undefined): Set<string> {
  return new Set(
    (header(headers, 'anthropic-beta') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

function isEmptyContent(content: unknown): boolean {
  return content === '' || (Array.isArray(content) && content.length === 0);
}

function blocksOf(content: unknown): any[] {
  return Array.isArray(content) ? content : [];
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

// A custom tool's name and its input properties' names (server tools carry a `type` and a fixed name). The
// messages are the live API's: "tools.134.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
// ([3p] github/copilot-cli#1879, 2026; older captures say {1,64}) and "tools.127.custom.input_schema.properties:
// Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'" ([3p] glama.ai, an MCP server's docs).
const CUSTOM_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

function customToolRefusal(tool: any, i: number): string | null {
  if (tool.type !== undefined && tool.type !== 'custom') return null;
  if (!CUSTOM_TOOL_NAME.test(tool.name)) {
    return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
  }
  const props = tool.input_schema?.properties;
  if (props && typeof props === 'object' && Object.keys(props).some((k) => !PROPERTY_KEY.test(k))) {
    return `tools.${i}.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'`;
  }
  return null;
}

/** The model-independent shape of a Messages request; returns the 400 message, or null. */
export function validateShape(body: any): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return 'Request body must be a JSON object';
  }
  if (body.model === undefined) return 'model: Field required';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Input should be a non-empty string';
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return 'max_tokens: Input should be a valid integer greater than or equal to 1';
  }
  if (body.messages === undefined) return 'messages: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Input should be a valid list';
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    return 'stream: Input should be a valid boolean';
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    const names = new Set<string>();
    for (const [i, tool] of body.tools.entries()) {
      if (!tool || typeof tool !== 'object' || typeof tool.name !== 'string')
        return `tools.${i}.name: Field required`;
      if (names.has(tool.name)) return `tools: Tool names must be unique. Duplicate: ${tool.name}`;
      names.add(tool.name);
      const refused = customToolRefusal(tool, i);
      if (refused) return refused;
    }
  }

  for (const [i, m] of body.messages.entries()) {
    if (!m || typeof m !== 'object' || Array.isArray(m))
      return `messages.${i}: Input should be a valid dictionary`;
    if (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system') {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    if (m.content === undefined) return `messages.${i}.content: Field required`;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      return `messages.${i}.content: Input should be a valid string or a valid list`;
    }
    for (const [j, block] of blocksOf(m.content).entries()) {
      if (!block || typeof block !== 'object' || typeof block.type !== 'string') {
        return `messages.${i}.content.${j}.type: Field required`;
      }
    }
  }

  // `system`-role entries (allowed by the SDK's types) do not take part in the user/assistant alternation.
  const turns: Array<{ m: any; i: number }> = [];
  for (const [i, m] of body.messages.entries()) if (m.role !== 'system') turns.push({ m, i });
  if (turns.length === 0) return 'messages: at least one message is required';
  if (turns[0]!.m.role !== 'user') return 'messages: first message must use the "user" role';

  let prevToolUseIds: string[] = [];
  // The API refuses a tool_use id that any earlier block of the request used, in this message or another.
  const seenToolUseIds = new Set<string>();
  for (const [k, { m, i }] of turns.entries()) {
    const prev = k > 0 ? turns[k - 1]! : null;
    if (prev && prev.m.role === m.role) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`;
    }
    const isFinal = k === turns.length - 1;
    if (isEmptyContent(m.content) && !(isFinal && m.role === 'assistant')) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const blocks = blocksOf(m.content);
    if (m.role === 'assistant') {
      const ids: string[] = [];
      for (const [j, block] of blocks.entries()) {
        if (block.type === 'tool_result') {
          return `messages.${i}.content.${j}: \`tool_result\` blocks can only be in \`user\` messages`;
        }
        if (block.type !== 'tool_use') continue;
        if (typeof block.id !== 'string' || block.id === '')
          return `messages.${i}.content.${j}.id: Field required`;
        if (typeof block.name !== 'string') return `messages.${i}.content.${j}.name: Field required`;
        if (seenToolUseIds.has(block.id))
          return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
        seenToolUseIds.add(block.id);
        ids.push(block.id);
      }
      prevToolUseIds = ids;
      continue;
    }
    const answered = new Set<string>();
    // The results must open the next user message: one after a text block does not answer its tool_use
    // (the API then reports the tool_use as unanswered, with the same text).
    let leading = true;
    for (const [j, block] of blocks.entries()) {
      if (block.type === 'tool_use') {
        return `messages.${i}.content.${j}: \`tool_use\` blocks can only be in \`assistant\` messages`;
      }
      if (block.type !== 'tool_result') {
        leading = false;
        continue;
      }
      if (!prevToolUseIds.includes(block.tool_use_id)) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
      if (leading) answered.add(block.tool_use_id);
    }
    const missing = prevToolUseIds.filter((id) => !answered.has(id));
    if (prev && missing.length > 0) {
      return `messages.${prev.i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    prevToolUseIds = [];
  }
  return null;
}

const THINKING_TYPES: ThinkingType[] = ['adaptive', 'enabled', 'disabled', 'between_tools'];
/** Fields each thinking config may carry besides `type` (the SDK's ThinkingConfig* types). */
const THINKING_FIELDS: Record<ThinkingType, string[]> = {
  adaptive: ['display', 'block_binding'],
  enabled: ['budget_tokens', 'display', 'block_binding'],
  disabled: [],
  between_tools: [],
};

/** Schema-level checks of `thinking`: unknown type, unknown fields, budget, display, block_binding. */
function thinkingSchema(thinking: any, beta: Set<string>): string | null {
  if (typeof thinking !== 'object' || Array.isArray(thinking) || !THINKING_TYPES.includes(thinking.type)) {
    return E.thinkingTypeInvalid();
  }
  const type = thinking.type as ThinkingType;
  for (const key of Object.keys(thinking)) {
    if (key === 'type' || thinking[key] === undefined) continue;
    if (!THINKING_FIELDS[type].includes(key)) return E.extraInput(`thinking.${type}.${key}`);
  }
  if (type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
    if (!Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Input should be a valid integer';
    if (budget < 1024) return E.BUDGET_TOO_SMALL;
  }
  if (present(thinking.display)) {
    const ok =
      thinking.display === 'summarized' ||
      thinking.display === 'omitted' ||
      (thinking.display === 'updates' && beta.has(BETA_DISPLAY_UPDATES));
    if (!ok) return E.displayInvalid(type);
  }
  if (thinking.block_binding !== undefined) {
    if (!beta.has(BETA_BINDING)) return E.extraInput(`thinking.${type}.block_binding`);
    const behavior = thinking.block_binding?.prefix_mismatch_behavior;
    if (behavior !== undefined && behavior !== 'error' && behavior !== 'drop_block') {
      // wording not documented
      return `thinking.${type}.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'`;
    }
  }
  return null;
}

/** The model's own refusal of a thinking type it does not take. */
function thinkingTypeRefusal(type: ThinkingType, rules: ModelRules): string | null {
  if (rules.thinking.includes(type)) return null;
  switch (type) {
    case 'enabled':
      return E.ENABLED_NOT_SUPPORTED;
    case 'adaptive':
      return E.ADAPTIVE_NOT_SUPPORTED;
    case 'between_tools':
      return E.BETWEEN_TOOLS_NOT_SUPPORTED;
    case 'disabled':
      return rules.disabledRefusal ?? E.extraInput('thinking.disabled'); // every model in the table has a text
  }
}

function samplingRefusal(body: any, rules: ModelRules, apiVersion: string | undefined): string | null {
  const fields = (['temperature', 'top_p', 'top_k'] as const).filter((f) => present(body[f]));
  if (fields.length === 0) return null;
  // [versioning]: removed under 2026-10-21 (what SDK 1.x sends); only 2023-06-01 keeps the old behaviour.
  if (apiVersion !== '2023-06-01') return E.samplingRemoved(fields[0]!);
  const both = present(body.temperature) && present(body.top_p);
  switch (rules.sampling) {
    case 'removed':
      // Non-default values refused; only temperature has a documented default (1).
      if (present(body.temperature) && body.temperature !== 1) return E.samplingDeprecated('temperature');
      if (present(body.top_p)) return E.samplingDeprecated('top_p');
      if (present(body.top_k)) return E.samplingDeprecated('top_k');
      return null;
    case 'haiku-5-5':
      if (both) return E.TEMPERATURE_AND_TOP_P;
      if (present(body.temperature) && body.temperature !== 1) return E.samplingDeprecated('temperature');
      if (present(body.top_p) && body.top_p !== 0.99) return E.samplingDeprecated('top_p');
      if (present(body.top_k)) return E.samplingDeprecated('top_k');
      return null;
    case 'exclusive':
      return both ? E.TEMPERATURE_AND_TOP_P : null;
  }
}

function systemMessageRefusal(body: any, rules: ModelRules): string | null {
  for (const [i, m] of (body.messages as any[]).entries()) {
    if (m.role !== 'system') continue;
    if (!rules.midConversationSystem) return E.systemRoleNotSupported(i);
    const prev = i > 0 ? body.messages[i - 1] : undefined;
    if (!prev) return E.systemMessagePlacement(i, 'first');
    if (prev.role === 'assistant') {
      const toolUse = contentBlocks(prev.content).some((b) => b.type === 'tool_use');
      return E.systemMessagePlacement(i, toolUse ? 'after-tool-use' : 'after-assistant');
    }
  }
  return null;
}

/** Every `cache_control` value in the request, with its path as the API's schema errors name it. */
function cacheMarkers(body: any): { path: string; cc: unknown }[] {
  const out: { path: string; cc: unknown }[] = [];
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${path}.${i}`);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (k === 'cache_control') {
        if (v !== null && v !== undefined) out.push({ path: `${path}.cache_control`, cc: v });
      } else walk(v, `${path}.${k}`);
    }
  };
  if (present(body.cache_control)) out.push({ path: 'cache_control', cc: body.cache_control });
  if (Array.isArray(body.tools)) walk(body.tools, 'tools');
  if (Array.isArray(body.system)) walk(body.system, 'system');
  for (const [i, m] of (body.messages as any[]).entries()) {
    if (Array.isArray(m.content)) walk(m.content, `messages.${i}.content`);
  }
  return out;
}

/**
 * [caching]: `{type: "ephemeral", ttl?: "5m" | "1h"}` only; at most 4 breakpoints (the top-level one counts);
 * none on a thinking block; a 1-hour breakpoint never after a 5-minute one, in the order the API reads the
 * prompt (tools, system, messages; the top-level breakpoint sits on the last block); "1h" only on a model
 * that has it.
 */
export function cacheControlRefusal(body: any, prompt: Prompt, rules: ModelRules): string | null {
  for (const { path, cc } of cacheMarkers(body)) {
    if (typeof cc !== 'object' || Array.isArray(cc)) return `${path}: Input should be a valid dictionary`;
    const { type, ttl } = cc as { type?: unknown; ttl?: unknown };
    if (type !== 'ephemeral') return E.cacheTypeInvalid(path);
    if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') return E.cacheTtlInvalid(path);
    if (ttl === '1h' && !rules.cacheTtl1h) return E.ttl1hNotSupported(rules.id);
  }
  let count = body.cache_control && typeof body.cache_control === 'object' ? 1 : 0;
  for (const el of prompt.elements) {
    if (!el.breakpoint) continue;
    count += countBreakpoints(el.raw);
    if (el.section === 'messages' && el.raw.type === 'thinking' && present(el.raw.cache_control)) {
      return E.thinkingCacheControl(el.message!, el.block);
    }
  }
  if (count > 4) return E.tooManyBreakpoints(count);
  let seen5m = false;
  for (const bp of breakpointsOf(prompt, body)) {
    if (bp.ttl === '1h' && seen5m) return E.TTL_ORDER;
    if (bp.ttl === '5m') seen5m = true;
  }
  return null;
}

function changedSentence(prompt: Prompt, seal: { tools: string; system: string }): string {
  // wording not documented (the docs: "usually ends with a sentence naming what changed").
  if (seal.tools !== prompt.toolsDigest)
    return 'The `tools` differ from the request that produced the block.';
  if (seal.system !== prompt.systemDigest)
    return 'The `system` prompt differs from the request that produced the block.';
  return 'An earlier message, or an earlier block of its message, differs from the request that produced the block.';
}

interface ThinkingCheck {
  refusal: string | null;
  dropped: InputTransformation[];
}

/** Signatures, edits and (on models that check) the prefix of every thinking block sent back. */
function thinkingBlocksCheck(
  body: any,
  rules: ModelRules,
  prompt: Prompt,
  bindingBeta: boolean,
): ThinkingCheck {
  const dropped: InputTransformation[] = [];
  const latestAssistant = (body.messages as any[]).map((m) => m.role).lastIndexOf('assistant');
  const dropOnMismatch = body.thinking?.block_binding?.prefix_mismatch_behavior === 'drop_block';
  let prefixBroken = false;
  for (const [at, el] of prompt.elements.entries()) {
    if (el.section !== 'messages' || el.raw.type !== 'thinking') continue;
    const i = el.message!;
    const j = el.block;
    const seal = readSignature(el.raw.signature);
    if (!seal) return { refusal: E.invalidSignature(i, j), dropped };
    if (seal.text !== sha256(typeof el.raw.thinking === 'string' ? el.raw.thinking : '')) {
      return {
        refusal: i === latestAssistant ? E.LATEST_THINKING_MODIFIED : E.invalidSignature(i, j),
        dropped,
      };
    }
    if (!rules.prefixCheck) continue;
    const path = `messages.${i}.content.${j}`;
    if (seal.model !== rules.id && !(rules.readsThinkingFrom ?? []).includes(seal.model)) {
      // [preserved]: a block the model cannot read is dropped without an error.
      dropped.push({ type: 'thinking_dropped', path, reason: 'model_binding_mismatch' });
      continue;
    }
    const before = at > 0 ? prompt.hashes[at - 1]! : undefined;
    // [preserved]: once a block fails, it and every later thinking block are invalid.
    if (prefixBroken || seal.prefix !== before) {
      if (!dropOnMismatch) {
        return {
          refusal: E.boundToDifferentConversation(i, j, changedSentence(prompt, seal), bindingBeta),
          dropped,
        };
      }
      prefixBroken = true;
      dropped.push({ type: 'thinking_dropped', path, reason: 'prefix_binding_mismatch' });
    }
  }
  return { refusal: null, dropped };
}

function withoutBlocks(body: any, paths: InputTransformation[]): any {
  if (paths.length === 0) return body;
  const drop = new Set(paths.map((p) => p.path));
  return {
    ...body,
    messages: (body.messages as any[]).map((m, i) => ({
      ...m,
      content: contentBlocks(m.content).filter((_b, j) => !drop.has(`messages.${i}.content.${j}`)),
    })),
  };
}

export type CheckResult = { ok: true; request: AcceptedRequest } | { ok: false; refusal: Refusal };

const invalid = (message: string): CheckResult => ({
  ok: false,
  refusal: { status: 400, type: 'invalid_request_error', message },
});

/** The whole contract: shape, model, then the model's rules. */
export function checkRequest(body: any, ctx: RequestContext = {}): CheckResult {
  const shape = validateShape(body);
  if (shape !== null) return invalid(shape);
  const rules = rulesFor(body.model, ctx.now ?? Date.now());
  if (!rules) {
    return {
      ok: false,
      refusal: { status: 404, type: 'not_found_error', message: E.unknownModel(body.model) },
    };
  }
  const beta = betas(ctx.headers);
  const apiVersion = header(ctx.headers, 'anthropic-version');

  // Schema level.
  if (apiVersion !== '2023-06-01') {
    const sampling = samplingRefusal(body, rules, apiVersion);
    if (sampling) return invalid(sampling);
  }
  if (present(body.thinking)) {
    const schema = thinkingSchema(body.thinking, beta);
    if (schema) return invalid(schema);
  }
  const effort: Effort | undefined = body.output_config?.effort ?? undefined;
  if (effort !== undefined && !ALL_EFFORTS.includes(effort)) return invalid(E.EFFORT_INVALID);

  // The model's limits and rules.
  if (body.max_tokens > rules.maxOutput) {
    return invalid(E.maxTokensTooLarge(body.max_tokens, rules.maxOutput, body.model));
  }
  const type: ThinkingType | undefined = present(body.thinking) ? body.thinking.type : undefined;
  if (type) {
    const refused = thinkingTypeRefusal(type, rules);
    if (refused) return invalid(refused);
    if (type === 'enabled' && body.thinking.budget_tokens >= body.max_tokens) {
      return invalid(E.BUDGET_NOT_BELOW_MAX_TOKENS);
    }
  }
  if (effort !== undefined) {
    if (rules.efforts.length === 0) return invalid(E.EFFORT_NOT_SUPPORTED);
    if (!rules.efforts.includes(effort)) return invalid(E.effortLevelNotSupported(effort, rules.efforts));
    const thinkingOff = type === 'between_tools' || type === 'disabled';
    if (
      thinkingOff &&
      rules.maxEffortWithThinkingOff &&
      effortRank(effort) > effortRank(rules.maxEffortWithThinkingOff)
    ) {
      return invalid(E.effortTooHighWithoutThinking(effort));
    }
  }
  const sampling = samplingRefusal(body, rules, apiVersion);
  if (sampling) return invalid(sampling);

  const forced = body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool';
  if (forced && rules.forcedToolChoice === 'refused') return invalid(E.FORCED_TOOL_CHOICE_NOT_SUPPORTED);
  if (forced && rules.forcedToolChoice === 'not-with-enabled' && type === 'enabled') {
    return invalid(E.FORCED_TOOL_CHOICE_WITH_THINKING);
  }

  const system = systemMessageRefusal(body, rules);
  if (system) return invalid(system);

  const prompt = promptOf(body);
  const cache = cacheControlRefusal(body, prompt, rules);
  if (cache) return invalid(cache);

  const last = body.messages.length - 1;
  const endsWithAssistant = body.messages[last].role === 'assistant';
  if (endsWithAssistant && !rules.prefill) {
    const head = prompt.hashes.at(-1) ?? '';
    if (!ctx.isPauseContinuation?.(rules.id, head)) return invalid(E.PREFILL_NOT_SUPPORTED);
  }

  const bindingBeta = beta.has(BETA_BINDING);
  const blocks = thinkingBlocksCheck(body, rules, prompt, bindingBeta);
  if (blocks.refusal) return invalid(blocks.refusal);

  const thinking: ThinkingMode =
    type === undefined ? rules.thinkingWhenOmitted : type === 'disabled' ? 'off' : type;
  const display: DisplayMode = body.thinking?.display ?? rules.displayDefault;
  return {
    ok: true,
    request: {
      rules,
      prompt,
      billedPrompt: blocks.dropped.length > 0 ? promptOf(withoutBlocks(body, blocks.dropped)) : prompt,
      thinking,
      thinkingInResponse: thinking !== 'off' && !forced,
      display,
      continues: endsWithAssistant ? last : null,
      inputTransformations: blocks.dropped,
      bindingBeta,
    },
  };
}

/**
 * The 400 (or 404) message for `body`, or null when the model server would accept it. Stateless: a final
 * assistant message counts as prefill unless `ctx.isPauseContinuation` says it continues a `pause_turn`.
 */
export function validateMessagesRequest(body: any, ctx: RequestContext = {}): string | null {
  const result = checkRequest(body, ctx);
  return result.ok ? null : result.refusal.message;
}
