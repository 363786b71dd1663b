/**
 * A `/drydock` command in a comment on a pull request or an issue. `plan` carries what follows it (the rest of
 * its line and the lines after): on an issue, what the plan is to be about (external text, capped later).
 */
export type CommentCommand =
  | { kind: 'plan'; text: string }
  | { kind: 'approve' }
  | { kind: 'reject'; reason: string }
  | { kind: 'invalid'; message: string };

/** The first line of a comment that starts with /drydock, parsed; null when the comment has none. */
export function parseCommand(body: string): CommentCommand | null {
  const raw = body.split(/\r?\n/);
  const lines = raw.map((l) => l.trim());
  const at = lines.findIndex((l) => /^\/drydock(\s|$)/.test(l));
  const line = lines[at];
  if (line === undefined) return null;
  const [, verb = '', ...rest] = line.split(/\s+/);
  const text = rest.join(' ').trim();
  switch (verb) {
    case 'plan':
      return { kind: 'plan', text: [text, ...raw.slice(at + 1)].join('\n').trim() };
    case 'approve':
      return { kind: 'approve' };
    case 'reject':
      return text
        ? { kind: 'reject', reason: text.slice(0, 10_000) }
        : { kind: 'invalid', message: 'reject needs a reason: /drydock reject <reason>' };
    default:
      return {
        kind: 'invalid',
        message: `unknown command "${verb}"; use /drydock plan, /drydock approve or /drydock reject <reason>`,
      };
  }
}
