/**
 * The error texts the model server answers with. Each says where its wording comes from:
 *   [doc]  quoted from Anthropic's pages (URLs under https://platform.claude.com/docs/en/)
 *   [3p]   seen in third-party captures of the live API, not in Anthropic's pages
 *   `// wording not documented`: the docs say only that a 400 happens; the text is ours.
 */

// [doc] api/rate-limits: the 429 at the usage tier's monthly spend cap (with details.error_code
// enforced_spend_limit_reached, no retry-after); access resumes at 00:00 UTC on the first of the next month.
export function tierSpendCapReached(resumesOn: string): string {
  return `You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on ${resumesOn} at 00:00 UTC.`;
}

// [3p] (captures of the live API; [doc] api/errors says only that a spend limit one sets answers 400
// invalid_request_error): the organization's, or a workspace's, limit.
export function spendLimitSetReached(scope: 'organization' | 'workspace', resumesOn: string): string {
  const which = scope === 'workspace' ? 'workspace API usage limits' : 'API usage limits';
  return `You have reached your specified ${which}. You will regain access on ${resumesOn} at 00:00 UTC.`;
}

// [3p] (the 401 of an unknown key; [doc] api/errors names only the type).
export const INVALID_API_KEY = 'invalid x-api-key';

// [doc] api/errors (the 403 permission_error's description).
export const PERMISSION_DENIED = 'Your API key does not have permission to use the specified resource.';

// [doc] models/sonnet-5-5/migration-guide, build-with-claude/thinking-troubleshooting (all 4.7+ models).
export const ENABLED_NOT_SUPPORTED =
  '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';

// [doc] build-with-claude/thinking-troubleshooting (4.5-generation models).
export const ADAPTIVE_NOT_SUPPORTED = 'adaptive thinking is not supported on this model';

// [doc] build-with-claude/thinking-troubleshooting (Indonesian locale; the string is English).
export const BETWEEN_TOOLS_NOT_SUPPORTED = '"thinking.type.between_tools" is not supported for this model.';

// [doc] models/sonnet-5-5/migration-guide.
export const PREFILL_NOT_SUPPORTED =
  'This model does not support assistant message prefill. The conversation must end with a user message.';

// [doc] models/sonnet-5-5/whats-new-sonnet-5-5, models/opus-5-5/whats-new-opus-5-5.
export const FORCED_TOOL_CHOICE_NOT_SUPPORTED =
  'tool_choice: type "tool" and "any" are not supported for this model.';

// wording not documented (the API's long-standing text for extended thinking with forced tool use).
export const FORCED_TOOL_CHOICE_WITH_THINKING =
  'Thinking may not be enabled when tool_choice forces tool use.';

// [doc] build-with-claude/thinking-troubleshooting (Indonesian locale), for between_tools / Haiku 5.5 disabled;
// also used for Opus 5 disabled + xhigh/max, whose text the docs do not give.
export function effortTooHighWithoutThinking(effort: string): string {
  return `output_config.effort '${effort}' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking.`;
}

// [3p] (seen on Opus 4.1 and Sonnet 4.5).
export const EFFORT_NOT_SUPPORTED = 'This model does not support the effort parameter.';

// wording not documented.
export function effortLevelNotSupported(effort: string, supported: readonly string[]): string {
  return `output_config.effort '${effort}' is not supported on this model. Use one of: ${supported.map((e) => `'${e}'`).join(', ')}.`;
}

// wording not documented (schema-style, like the API's other enum errors).
export const EFFORT_INVALID =
  "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'";

// wording not documented (schema-style).
export function thinkingTypeInvalid(): string {
  return "thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive', 'between_tools'";
}

// wording not documented. [doc] build-with-claude/thinking says `updates` without its beta header is refused
// "with the same 400 invalid_request_error as an unknown display value".
export function displayInvalid(type: string): string {
  return `thinking.${type}.display: Input should be 'summarized' or 'omitted'`;
}

// Schema-style "extra field" errors. [doc] build-with-claude/preserved-thinking: a `block_binding` sent without
// its beta header gets a message ending `block_binding: Extra inputs are not permitted`; the rest is ours.
export function extraInput(path: string): string {
  return `${path}: Extra inputs are not permitted`;
}

// [3p] (live probe, 2026-10): the schema check fires before the model's own thinking checks.
export const BUDGET_TOO_SMALL =
  'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';

// [3p] (the docs give only the rule "budget_tokens must be set to a value less than max_tokens").
export const BUDGET_NOT_BELOW_MAX_TOKENS =
  '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';

// [3p] (many captures; the docs give no text).
export function maxTokensTooLarge(maxTokens: number, cap: number, model: string): string {
  return `max_tokens: ${maxTokens} > ${cap}, which is the maximum allowed number of output tokens for ${model}`;
}

// [3p] Under API version 2026-10-21 sampling parameters are removed ([doc] api/versioning: "returns a 400").
export function samplingRemoved(field: string): string {
  return `${field}: Extra inputs are not permitted`;
}

// [3p] for `temperature` (Opus 4.7, reported for Sonnet 5.5 / Opus 5.5); for top_p / top_k the same
// shape — wording not documented.
export function samplingDeprecated(field: string): string {
  return `\`${field}\` is deprecated for this model.`;
}

// [3p] (live probes of Haiku 4.5, Sonnet/Opus 4.5 and 4.6).
export const TEMPERATURE_AND_TOP_P =
  '`temperature` and `top_p` cannot both be specified for this model. Please use only one.';

// [3p] (many captures; the docs say only "up to 4").
export function tooManyBreakpoints(found: number): string {
  return `A maximum of 4 blocks with cache_control may be provided. Found ${found}.`;
}

// wording not documented. [doc] prompt-caching: thinking blocks "cannot be explicitly marked with cache_control".
export function thinkingCacheControl(i: number, j: number): string {
  return `messages.${i}.content.${j}.thinking.cache_control: Extra inputs are not permitted`;
}

// wording not documented. [doc] prompt-caching ("Mixing different TTLs"): cache entries with a longer TTL
// must appear before shorter ones, i.e. a 1-hour entry before any 5-minute entry.
export const TTL_ORDER = "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block";

// wording not documented: the schema errors' shape (`<path>: Input should be ...`). [doc] prompt-caching:
// `ttl` is "5m" or "1h"; `type` is "ephemeral".
export function cacheTtlInvalid(path: string): string {
  return `${path}.ttl: Input should be '5m' or '1h'`;
}
export function cacheTypeInvalid(path: string): string {
  return `${path}.type: Input should be 'ephemeral'`;
}

// wording not documented. A model without the 1-hour cache (none on the Claude API today; Vertex AI's
// Claude prompt-caching page names older models without it).
export function ttl1hNotSupported(model: string): string {
  return `The 1-hour cache duration (cache_control.ttl "1h") is not supported for the model ${model}.`;
}

// [doc] build-with-claude/preserved-thinking: a tampered, truncated or empty signature.
export function invalidSignature(i: number, j: number): string {
  return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
}

// [doc] build-with-claude/thinking-troubleshooting.
export const LATEST_THINKING_MODIFIED =
  '`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified';

/**
 * [doc] build-with-claude/preserved-thinking, thinking-troubleshooting: a failed prefix check. The beta-header
 * sentence is added when the request lacks it. The docs say the message "usually ends with a sentence naming
 * what changed" and not to match on it; that last sentence is ours (wording not documented).
 */
export function boundToDifferentConversation(
  i: number,
  j: number,
  changed: string,
  hasBetaHeader: boolean,
): string {
  const head = `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`;
  const beta = hasBetaHeader
    ? ''
    : ' That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header.';
  return `${head}${beta} ${changed}`;
}

// [3p] (404 body for unknown and retired IDs; the docs show only the generic 404 shape).
export function unknownModel(model: string): string {
  return `model: ${model}`;
}

// wording not documented (schema-style: the role is not allowed on this model).
export function systemRoleNotSupported(i: number): string {
  return `messages.${i}.role: Input should be 'user' or 'assistant'`;
}

// wording not documented. [doc] mid-conversation-system-messages: a content-carrying system message cannot be
// first, must follow a `user` turn, and cannot sit between a `tool_use` and its `tool_result`.
export function systemMessagePlacement(
  i: number,
  where: 'first' | 'after-tool-use' | 'after-assistant',
): string {
  if (where === 'first') return `messages.${i}: a message with role "system" cannot be the first message`;
  if (where === 'after-tool-use')
    return `messages.${i}: a message with role "system" cannot come between \`tool_use\` blocks and their \`tool_result\` blocks`;
  return `messages.${i}: a message with role "system" must follow a message with role "user"`;
}
