import type { RunDefaults } from '../domain/types.js';
import type { Logger } from '../logger.js';

// Forms of a request the API still takes but means to retire: each is logged once for every session, job or
// trigger made (or changed) with it, with what to write instead; the OpenAPI document marks it deprecated.

/**
 * `network: true` (the host's network, before there were lists) now means the configured default list of host
 * names (execute.network_default_domains): said once for each session, job or trigger made with it.
 */
export function noteDeprecatedNetwork(
  logger: Logger,
  options: RunDefaults | undefined,
  subject: string,
): void {
  if (options?.network !== true) return;
  logger.warn(
    { subject },
    'network: true is deprecated: it allows the configured execute.network_default_domains; give the list of host names instead, e.g. "network": ["registry.npmjs.org"]',
  );
}
