// Reading webhook payloads defensively: every field is type-checked, texts are capped, and identifiers that end
// up in git commands, paths or prompt instructions must match strict patterns. A reader never throws on a
// payload: what is missing or malformed reads as null.

/** A value inside untyped JSON, or undefined when any step of the path is missing or not an object. */
export function at(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export const SHA = /^[0-9a-f]{40}$/;
export const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
/** A GitHub login (users: 1-39 letters, digits, hyphens; apps: `name[bot]`). */
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/;

/** A full commit sha, lower-case hex, or null. */
export function sha(v: unknown): string | null {
  return typeof v === 'string' && SHA.test(v) ? v : null;
}

/** owner/repo of the payload's repository, or null. */
export function repositoryOf(payload: unknown): string | null {
  const name = str(at(payload, 'repository', 'full_name'));
  return name && REPO.test(name) ? name : null;
}

/** A positive safe integer (an issue number, a run id), or null. */
export function positive(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null;
}

/** A GitHub login, or null when it is not one. */
export function login(v: unknown): string | null {
  return typeof v === 'string' && LOGIN.test(v) ? v : null;
}

/**
 * A branch or tag name git accepts (git check-ref-format, stricter): letters, digits and `_ . / -`, at most 255
 * characters, no leading `-` or `/`, no `..`, `//`, `/.`, trailing `/`, `.` or `.lock`. Such a name is safe in a
 * git argument once prefixed with `refs/heads/` or `refs/tags/`, and in a prompt's instructions.
 */
export function refName(v: unknown): string | null {
  if (typeof v !== 'string' || !/^[\w./-]{1,255}$/.test(v)) return null;
  if (/^[-/.]/.test(v) || /\.\.|\/\/|\/\.|[/.]$|\.lock$/.test(v) || v.includes('@{')) return null;
  return v;
}

/** The branch of a full ref (`refs/heads/<branch>`), or null for a tag or anything else. */
export function branchOfRef(v: unknown): string | null {
  const ref = str(v);
  return ref?.startsWith('refs/heads/') ? refName(ref.slice('refs/heads/'.length)) : null;
}

/** Text cut to `max` characters, saying how much was cut. */
export function capped(v: unknown, max: number): string {
  const text = str(v) ?? '';
  return text.length > max ? `${text.slice(0, max)}\n[… ${text.length - max} more characters cut]` : text;
}

/** A short text (a name, a title, a URL) or null: cut to `max` characters without a note. */
export function short(v: unknown, max: number): string | null {
  const text = str(v);
  return text === null ? null : text.slice(0, max);
}

/** The names of a payload's labels (at most 100, each cut to 100 characters). */
export function labelsOf(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v
    .slice(0, 100)
    .map((l) => short(at(l, 'name'), 100))
    .filter((l): l is string => !!l);
}

/** Only links a browser may follow without running anything: http and https, at most 2,000 characters. */
export function webUrl(v: unknown): string | null {
  if (typeof v !== 'string' || v.length > 2_000) return null;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/** A name made safe for a prompt's instructions: only letters, digits, `_ . -`, at most 100 characters. */
export const safeName = (v: string): string => v.replace(/[^\w.-]/g, '').slice(0, 100);
