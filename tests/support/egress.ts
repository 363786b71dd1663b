import { networkInterfaces } from 'node:os';
import type { Lookup } from '../../src/agent/egress.js';

// For tests of the egress proxy (src/agent/egress.ts): names resolved by a table rather than DNS (the machine has
// no internet), and an address of this machine that is neither loopback nor link-local, which the proxy lets a
// listed name reach: a test server bound on 0.0.0.0 answers there.

/** This machine's first non-internal IPv4 address (say 192.0.2.2 on the CI container's eth0). */
export function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.')) return a.address;
    }
  }
  throw new Error('test support: this machine has no non-loopback IPv4 address for the egress tests');
}

/** A resolver that knows only `names` (each to one or more addresses) and fails like DNS for the rest. */
export function lookupFrom(names: Record<string, string | string[]>): Lookup {
  return async (host) => {
    const found = names[host];
    if (found === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return (Array.isArray(found) ? found : [found]).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
  };
}
