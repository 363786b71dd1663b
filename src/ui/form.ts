import type { Context } from 'hono';

export type FormFields = Record<string, string | File | (string | File)[]>;

/** The request's form fields; an unparsable or non-form body reads as no fields. */
export async function readForm(c: Context): Promise<FormFields> {
  try {
    // `all: true` keeps repeated fields (checkboxes) as arrays.
    return await c.req.parseBody({ all: true });
  } catch {
    return {};
  }
}

/** A single text field; undefined when absent, repeated or a file. */
export function field(form: FormFields, name: string): string | undefined {
  const v = form[name];
  return typeof v === 'string' ? v : undefined;
}

/** Every text value of a repeated field. */
export function fields(form: FormFields, name: string): string[] {
  const v = form[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}
