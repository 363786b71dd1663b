// Secrets a server was given are never shown: not in its stderr tail, not in an error's message, not in logs.

/** `text` with every secret (of at least 4 characters; shorter ones would blank common text) replaced. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('[redacted]');
  }
  return out;
}

/** The last `lines` lines of `text`, each at most 500 characters. */
export function tail(text: string, lines = 20): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => (l.length > 500 ? `${l.slice(0, 500)}...` : l))
    .join('\n');
}
