import { type OptionsConfig, RemoteUsageError, str, type Values } from './args.js';

// Where a remote command connects and with what: the daemon URL and the API token (or a command's own
// credential), from flags or the environment, and keeping every token value out of error messages.

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export const CONNECTION_HELP = `connection options (every remote command):
  --url URL             daemon URL (default: $DRYDOCK_URL, else ${DEFAULT_URL})
  --token TOKEN         API token (default: $DRYDOCK_TOKEN, which is better: flags show up in ps)
  -h, --help            print this help

exit codes: 0 success; 1 the API refused or failed, or the daemon is unreachable; 2 bad usage`;

export const connectionOptions = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionsConfig;

export interface Credential {
  option: string;
  env: string;
  /** What it is, for messages: "trigger token". */
  name: string;
}

/**
 * The daemon URL and token from --url/--token, else DRYDOCK_URL/DRYDOCK_TOKEN; the token from the
 * command's own credential option or variable instead when it has one.
 */
export function connection(values: Values, credential?: Credential): { url: string; token: string } {
  const url = str(values, 'url') ?? (process.env.DRYDOCK_URL?.trim() || DEFAULT_URL);
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new RemoteUsageError(`the daemon URL must be an http:// or https:// URL, got "${url}"`);
  }
  const token = credential
    ? (str(values, credential.option) ?? process.env[credential.env] ?? '').trim()
    : (str(values, 'token') ?? process.env.DRYDOCK_TOKEN ?? '').trim();
  if (!token) {
    throw new RemoteUsageError(
      credential
        ? `no ${credential.name}: pass --${credential.option} (or set ${credential.env})`
        : 'no API token: set DRYDOCK_TOKEN (or pass --token); create one with `drydock token create --name NAME --role operator`',
    );
  }
  // A header value cannot hold these; fetch would echo the value in its error.
  if (/[\s\p{Cc}]/u.test(token) || [...token].some((ch) => ch.codePointAt(0)! > 0x7e)) {
    throw new RemoteUsageError(
      `the ${credential?.name ?? 'API token'} contains spaces, control or non-ASCII characters`,
    );
  }
  return { url, token };
}

/**
 * The token values this invocation may hold (from the environment, --token and the command's credential
 * option), to keep out of errors.
 */
export function knownTokens(args: string[], credential?: Credential): string[] {
  const found = [process.env.DRYDOCK_TOKEN ?? ''];
  const names = ['token'];
  if (credential) {
    found.push(process.env[credential.env] ?? '');
    names.push(credential.option);
  }
  args.forEach((a, i) => {
    for (const name of names) {
      if (a === `--${name}`) found.push(args[i + 1] ?? '');
      else if (a.startsWith(`--${name}=`)) found.push(a.slice(`--${name}=`.length));
    }
  });
  return found.map((t) => t.trim()).filter((t) => t.length >= 4);
}

export function redact(text: string, secrets: string[]): string {
  return secrets.reduce((t, s) => t.replaceAll(s, '[token]'), text);
}
