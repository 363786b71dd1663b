// HTML output for the approver page. Everything printed that came from the model or a person is escaped;
// the one way around it is `raw()`, kept for the markdown renderer's sanitized output.

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for an element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}

/** Markup known to be safe: built by `html` (whose interpolations were escaped) or vouched for by `raw`. */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** Marks markup as safe. Only for output that is already sanitized (the markdown renderer's). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** What a template may interpolate: `false`, null and undefined print nothing (for `cond && html\`…\``). */
export type Interpolation = SafeHtml | string | number | false | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** A tagged template that escapes every interpolation unless it is SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}
