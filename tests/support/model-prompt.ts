/**
 * The model server's view of a prompt: the request flattened into the order the API reads it
 * (tools → system → messages), one element per block, each in a canonical form with `cache_control` markers
 * removed, so two requests can be compared prefix by prefix. Used for prompt-cache accounting and for the
 * preserved-thinking prefix check. Pure: no clock, no state.
 */
import { createHash } from 'node:crypto';

export type CacheTtl = '5m' | '1h';

export interface PromptElement {
  section: 'tools' | 'system' | 'messages';
  /** Index into `body.messages` (messages section only). */
  message?: number;
  /** The message's role (messages section only). */
  role?: string;
  /** Index of the block inside its tool list, system array or message content. */
  block: number;
  /** The block itself as sent (string content expanded to a text block). */
  raw: any;
  /** Canonical JSON: keys sorted, `cache_control` and null-valued keys dropped, string content expanded. */
  json: string;
  /** Set when the block (or a block nested in it) carries `cache_control`. */
  breakpoint?: CacheTtl;
}

export interface Prompt {
  elements: PromptElement[];
  /** `ends[i]`: characters of canonical JSON in elements 0..i. */
  ends: number[];
  /** `hashes[i]`: sha256 chained over elements 0..i; identifies the prefix ending at element i. */
  hashes: string[];
  /** sha256 of the `tools` elements alone, and of the `system` elements alone. */
  toolsDigest: string;
  systemDigest: string;
}

/** The hash of the empty prefix (before the first element). */
export const EMPTY_PREFIX = sha256('model-server:prompt:v1');

export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Tokens of a prefix of `chars` canonical characters: ceil(chars / 4). Deterministic by design. */
export function tokensOf(chars: number): number {
  return Math.ceil(chars / 4);
}

/** Expands the `"content": "text"` shorthand the API treats as one text block. */
export function contentBlocks(content: unknown): any[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (key === 'cache_control' || v === null || v === undefined) continue;
    // A tool_result's string content is the same shorthand as a message's.
    if (key === 'content' && typeof v === 'string' && (value as any).type === 'tool_result') {
      out[key] = [{ text: v, type: 'text' }];
      continue;
    }
    out[key] = canonical(v);
  }
  return out;
}

/** Canonical JSON of one block (see `PromptElement.json`). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

/** The `ttl` of the first `cache_control` found in `value` (at any depth), or undefined. */
function breakpointOf(value: unknown): CacheTtl | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = breakpointOf(v);
      if (found) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const cc = (value as any).cache_control;
  if (cc && typeof cc === 'object') return cc.ttl === '1h' ? '1h' : '5m';
  for (const v of Object.values(value)) {
    const found = breakpointOf(v);
    if (found) return found;
  }
  return undefined;
}

/** Counts every `cache_control` marker in `value`, nested ones included. */
export function countBreakpoints(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countBreakpoints(v), 0);
  if (value === null || typeof value !== 'object') return 0;
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'cache_control') n += v && typeof v === 'object' ? 1 : 0;
    else n += countBreakpoints(v);
  }
  return n;
}

export class PromptBuilder {
  readonly elements: PromptElement[] = [];
  readonly ends: number[] = [];
  readonly hashes: string[] = [];

  /** A builder that continues `prompt` (to hash the blocks of a response after the request's). */
  static continuing(prompt: Prompt): PromptBuilder {
    const b = new PromptBuilder();
    b.elements.push(...prompt.elements);
    b.ends.push(...prompt.ends);
    b.hashes.push(...prompt.hashes);
    return b;
  }

  /** The hash of everything pushed so far. */
  head(): string {
    return this.hashes.at(-1) ?? EMPTY_PREFIX;
  }

  push(el: Omit<PromptElement, 'json' | 'breakpoint'>): PromptElement {
    // Role and position go into the identity, so the same block in another message is another prefix.
    const where =
      el.section === 'messages'
        ? { m: el.message, role: el.role }
        : { s: el.section === 'tools' ? 'tool' : 'system' };
    const json = canonicalJson({ ...where, block: el.raw });
    const breakpoint = breakpointOf(el.raw);
    const element: PromptElement = { ...el, json, ...(breakpoint ? { breakpoint } : {}) };
    this.ends.push((this.ends.at(-1) ?? 0) + json.length);
    this.hashes.push(sha256(`${this.head()}\n${json}`));
    this.elements.push(element);
    return element;
  }

  build(): Prompt {
    const digest = (section: PromptElement['section']): string =>
      sha256(
        this.elements
          .filter((e) => e.section === section)
          .map((e) => e.json)
          .join('\n'),
      );
    return {
      elements: this.elements,
      ends: this.ends,
      hashes: this.hashes,
      toolsDigest: digest('tools'),
      systemDigest: digest('system'),
    };
  }
}

/**
 * Flattens a (validated) request body. `system`-role messages take part like any other message.
 * Thinking blocks are part of the prompt (the models that check prefixes keep them in context).
 */
export function promptOf(body: any): Prompt {
  const b = new PromptBuilder();
  for (const [i, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    b.push({ section: 'tools', block: i, raw: tool });
  }
  for (const [i, block] of contentBlocks(body.system).entries()) {
    b.push({ section: 'system', block: i, raw: block });
  }
  for (const [m, msg] of (body.messages as any[]).entries()) {
    for (const [i, block] of contentBlocks(msg.content).entries()) {
      b.push({ section: 'messages', message: m, block: i, raw: block, role: msg.role });
    }
  }
  return b.build();
}

/** Tokens of the whole prompt (what `input_tokens` is when nothing is cached). */
export function promptTokens(body: any): number {
  return Math.max(1, tokensOf(promptOf(body).ends.at(-1) ?? 0));
}
