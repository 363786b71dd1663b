/** A `/drydock` command in a pull request comment. */
export type CommentCommand =
  | { kind: 'plan' }
  | { kind: 'approve' }
  | { kind: 'reject'; reason: string }
  | { kind: 'invalid'; message: string };

/** The first line of a comment that starts with /drydock, parsed; null when the comment has none. */
export function parseCommand(body: string): CommentCommand | null {
  const line = body
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => /^\/drydock(\s|$)/.test(l));
  if (!line) return null;
  const [, verb = '', ...rest] = line.split(/\s+/);
  const text = rest.join(' ').trim();
  switch (verb) {
    case 'plan':
      return { kind: 'plan' };
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
