import type Anthropic from '@anthropic-ai/sdk';
import type { Config } from '../config/schema.js';
import { findModel, modelProblems, shapeThinking } from '../models/catalogue.js';
import { createModelClient } from '../models/client.js';
import { classifyModelError } from '../models/errors.js';
import { costOf, promptTokensOf, tokensOf } from '../models/pricing.js';
import { daemonRipgrep } from './tools/ripgrep.js';

export interface DoctorReport {
  ok: boolean;
  /**
   * One line each, `ok <what>: …` or `FAIL <what>: <what to do>`: the API key, the model, thinking, price, the
   * Grep tool's ripgrep; then `warn …` and `note …` lines of the model's lifecycle.
   */
  lines: string[];
}

/**
 * `drydock doctor`: one tiny real request to the configured model and base URL, shaped exactly as runs
 * shape theirs (thinking and effort from the configuration, translated for the model), so a key, a model
 * name or a setting the API refuses shows up here rather than in the first nightly run.
 */
export async function doctor(
  config: Config,
  now: number,
  client?: Anthropic,
  rg: string | null = daemonRipgrep(),
): Promise<DoctorReport> {
  const a = config.anthropic;
  const lines: string[] = [];
  const baseUrl = a.base_url ?? 'https://api.anthropic.com';
  const model = findModel(config, a.model);
  // Its lifecycle at `now`: retired is an error (no request is sent), deprecated or retiring a warning.
  const problems = modelProblems(config, a.model, now);
  const shape = shapeThinking(model, { thinking: a.thinking, effort: a.effort, maxTokens: 2048 });

  lines.push(
    a.api_key
      ? `ok anthropic key: set (anthropic.api_key / ANTHROPIC_API_KEY), for ${baseUrl}`
      : 'FAIL anthropic key: set ANTHROPIC_API_KEY (or anthropic.api_key); every run fails without it',
  );
  const thinking = shape.thinking
    ? `${shape.thinking.type}${shape.thinking.budget_tokens ? ` (budget ${shape.thinking.budget_tokens} tokens)` : ''}${shape.thinking.display ? `, display ${shape.thinking.display}` : ''}`
    : 'none sent';
  lines.push(
    `ok thinking: asked ${typeof a.thinking === 'string' ? a.thinking : `budget ${a.thinking.budget_tokens}`}; sent ${thinking}; effort ${shape.output_config?.effort ?? "the model's default"}${shape.notes.length ? ` (${shape.notes.join('; ')})` : ''}`,
  );
  const pr = model.price;
  const band = model.long_prompt
    ? `; prompts above ${model.long_prompt.above_prompt_tokens} tokens: $${model.long_prompt.price.input} / $${model.long_prompt.price.output}`
    : '';
  lines.push(
    `ok price: $${pr.input} input / $${pr.output} output / $${pr.cache_write_5m} 5-min cache write / $${pr.cache_write_1h} 1-h cache write / $${pr.cache_read} cache read per million tokens${band}${model.known ? '' : ' (from the configuration: not a catalogue model)'}`,
  );
  lines.push(ripgrepLine(rg));
  for (const w of problems.warnings) lines.push(`warn ${w}`);
  for (const n of problems.notes) lines.push(`note ${n}`);
  const rgOk = rg !== null;
  if (problems.errors.length) {
    lines.splice(1, 0, `FAIL model ${a.model}: ${problems.errors.join('; ')}`);
    return { ok: false, lines };
  }
  if (!a.api_key && !client) {
    lines.splice(1, 0, `FAIL model ${a.model}: not checked without an API key (set ANTHROPIC_API_KEY)`);
    return { ok: false, lines };
  }

  const api = client ?? createModelClient(a, { maxRetries: 1, timeout: 60_000 });
  const started = Date.now();
  try {
    const message = await api.messages.create({
      model: a.model,
      max_tokens: shape.max_tokens,
      messages: [{ role: 'user', content: 'Reply with the single word: ready' }],
      ...(shape.thinking ? { thinking: shape.thinking as Anthropic.ThinkingConfigParam } : {}),
      ...(shape.output_config ? { output_config: shape.output_config } : {}),
    });
    const tokens = tokensOf(message.usage);
    const usd = costOf(tokens, model, promptTokensOf(tokens));
    lines.splice(
      1,
      0,
      `ok model ${a.model}: answered (${message.model}) in ${Date.now() - started} ms, stop reason ${message.stop_reason}; this check cost $${usd.toFixed(6)}`,
    );
    return { ok: rgOk, lines };
  } catch (err) {
    lines.splice(1, 0, `FAIL model ${a.model}: ${classifyModelError(err, a.model).reason}`);
    return { ok: false, lines };
  }
}

/** The Grep tool's program: Grep refuses to search without it. */
export function ripgrepLine(rg: string | null): string {
  return rg === null
    ? 'FAIL ripgrep: rg is not on PATH: install the ripgrep package (Debian: apt-get install ripgrep); the Grep tool refuses to search until then'
    : `ok ripgrep: ${rg}, for the Grep tool`;
}
