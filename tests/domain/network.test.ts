import { describe, expect, it } from 'vitest';
import {
  DEFAULT_NETWORK_DOMAINS,
  domainProblem,
  domainsAdded,
  domainsProblem,
  hostAllowed,
  networkDomains,
  normalizedDomains,
} from '../../src/domain/network.js';

// A network allowed is a list of host names (README, Security model): what a list may hold, how a name is
// matched against it, and how one list compares with another.

describe('domainProblem: what a list of host names may hold', () => {
  it.each([
    'registry.npmjs.org',
    'REGISTRY.npmjs.org',
    '*.github.com',
    '*.a.b.example',
    'xn--bcher-kva.example',
    'a-b.c-d.example',
    'example.test',
  ])('accepts %s', (entry) => {
    expect(domainProblem(entry)).toBeNull();
  });

  it.each([
    ['', 'an empty entry'],
    ['https://registry.npmjs.org', 'a URL'],
    ['registry.npmjs.org:443', 'a port or an IPv6 address'],
    ['::1', 'a port or an IPv6 address'],
    ['[::1]', 'a port or an IPv6 address'],
    ['127.0.0.1', 'an IP address'],
    ['10.0.0.1', 'an IP address'],
    ['127.1', 'an IP address'],
    ['example.123', 'an IP address'],
    ['localhost', 'a single label'],
    ['intranet', 'a single label'],
    ['api.localhost', 'a name of this machine'],
    ['*', 'a wildcard may only be'],
    ['*.com', 'a single label'],
    ['a.*.example', 'a wildcard may only be'],
    ['*example.com', 'a wildcard may only be'],
    ['registry.npmjs.org/path', 'not a host name: no path'],
    ['user@example.com', 'not a host name: no path'],
    [' example.com', 'not a host name: no path'],
    ['-bad.example', 'not a host name: labels'],
    ['under_score.example', 'not a host name: labels'],
    ['double..dot.example', 'not a host name: labels'],
    ['trailing.dot.', 'not a host name: labels'],
    [`${'a'.repeat(64)}.example`, 'not a host name: labels'],
  ])('refuses %j: %s', (entry, problem) => {
    expect(domainProblem(entry)).toContain(problem);
  });

  it('names the first bad entry of a list, with its place', () => {
    expect(domainsProblem(['ok.example', 'http://x.example'])).toBe(
      'network[1] "http://x.example" is a URL: give the host name alone, without scheme, port or path',
    );
    expect(domainsProblem(['ok.example', 7])).toBe('network[1]: expected a host name');
    expect(domainsProblem(Array.from({ length: 101 }, (_, i) => `h${i}.example`))).toContain('at most 100');
    expect(domainsProblem(['ok.example'])).toBeNull();
  });

  it('the built-in default list passes its own check', () => {
    expect(domainsProblem(DEFAULT_NETWORK_DOMAINS)).toBeNull();
  });
});

describe('networkDomains: the names a setting allows', () => {
  it('false, unset and [] allow none; true the defaults; a list itself, normalized', () => {
    expect(networkDomains(undefined, ['d.example'])).toEqual([]);
    expect(networkDomains(false, ['d.example'])).toEqual([]);
    expect(networkDomains([], ['d.example'])).toEqual([]);
    expect(networkDomains(true, ['D.example', 'c.example'])).toEqual(['c.example', 'd.example']);
    expect(networkDomains(['b.example', 'A.example', 'b.example'], [])).toEqual(['a.example', 'b.example']);
    expect(normalizedDomains(['B.x.example', 'a.example'])).toEqual(['a.example', 'b.x.example']);
  });
});

describe('hostAllowed', () => {
  const list = ['registry.npmjs.org', '*.github.com'];
  it.each([
    ['registry.npmjs.org', true],
    ['REGISTRY.NPMJS.ORG', true],
    ['registry.npmjs.org.', true],
    ['api.github.com', true],
    ['a.b.github.com', true],
    ['github.com', false],
    ['evilgithub.com', false],
    ['github.com.evil.example', false],
    ['npmjs.org', false],
    ['x.registry.npmjs.org', false],
  ])('%s: %s', (host, allowed) => {
    expect(hostAllowed(list, host)).toBe(allowed);
  });
});

describe('domainsAdded', () => {
  it('lists the entries of the second list that the first does not allow', () => {
    expect(domainsAdded(['*.github.com'], ['api.github.com', 'github.com', '*.x.github.com'])).toEqual([
      'github.com',
    ]);
    expect(domainsAdded([], ['a.example'])).toEqual(['a.example']);
    expect(domainsAdded(['a.example'], [])).toEqual([]);
  });
});
