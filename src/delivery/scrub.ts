// What a delivery may say about itself (logs, the stored error, the API, run events): never a credential.

/** A URL without its user name and password (`https://user:token@host/x` -> `https://host/x`). */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
}

/**
 * The text with every secret and every credential inside a URL replaced by `[redacted]`, cut to `max`
 * characters. git and the network stack may echo a URL as configured, userinfo included.
 */
export function scrub(text: string, secrets: readonly (string | null | undefined)[], max = 1_000): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  out = out.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1[redacted]@');
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}
