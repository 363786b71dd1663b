// Checking untrusted input (a model's tool call, a person's answers): the outcome, and the one shape test
// that both need.

/** A checked value, or what was wrong with it, worded for whoever sent it. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** A plain object (a JSON object), not an array, a class instance or null. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
