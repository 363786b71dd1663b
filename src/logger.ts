import { pino } from 'pino';

export type Logger = pino.Logger;

/** Keys whose values are credentials, wherever they sit (up to three levels deep). */
const SECRET_KEYS = [
  'token',
  'authorization',
  'api_key',
  'apiKey',
  'admin_token',
  'secret',
  'webhook_secrets',
  'password',
  'database_url',
  'x-hub-signature-256',
];
const REDACTED_PATHS = SECRET_KEYS.flatMap((k) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`;
  const join = (prefix: string) => (key.startsWith('[') ? `${prefix}${key}` : `${prefix}.${key}`);
  return [key.startsWith('[') ? key : k, join('*'), join('*.*'), join('*.*.*')];
});

/**
 * Structured JSON logs. Anything that looks like a credential is redacted by key, wherever it sits, so a
 * token that ends up in a logged object never reaches the output.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { name: 'drydock' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: REDACTED_PATHS,
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
