import { pino } from 'pino';

export type Logger = pino.Logger;

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
        paths: [
          'token',
          '*.token',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'req.headers.authorization',
          'api_key',
          '*.api_key',
          'admin_token',
          '*.admin_token',
          'secret',
          '*.secret',
          'webhook_secrets',
          '*.webhook_secrets',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
