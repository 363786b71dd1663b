import { createLogger, type Logger } from '../../src/logger.js';

/**
 * drydock's logger at info, as in production, into a sink that counts the lines instead of writing them;
 * warnings and errors still go to standard error, so a benchmark run shows what went wrong.
 */
export function countingLogger(): { logger: Logger; counts: { lines: number; warnings: number } } {
  const counts = { lines: 0, warnings: 0 };
  const logger = createLogger('info', {
    write(line: string) {
      counts.lines += 1;
      // pino levels: 40 warn, 50 error, 60 fatal.
      if (/"level":(40|50|60)/.test(line)) {
        counts.warnings += 1;
        process.stderr.write(`drydock: ${line}`);
      }
    },
  });
  return { logger, counts };
}
