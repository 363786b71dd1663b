import { describe, expect, it } from 'vitest';
import { canonicalZone } from '../../src/domain/zone.js';

describe('canonicalZone', () => {
  it('keeps the name the caller chose, never the runtime alias (Node 20 resolves Kyiv to Kiev)', () => {
    expect(new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Kyiv' }).resolvedOptions().timeZone).not.toBe(
      'Europe/Kyiv',
    );
    expect(canonicalZone('Europe/Kyiv')).toBe('Europe/Kyiv');
    expect(canonicalZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(canonicalZone('Europe/Kiev')).toBe('Europe/Kiev');
    expect(canonicalZone('Asia/Calcutta')).toBe('Asia/Calcutta');
  });

  it.each([
    ['europe/kyiv', 'Europe/Kyiv'],
    ['EUROPE/BERLIN', 'Europe/Berlin'],
    ['asia/ho_chi_minh', 'Asia/Ho_Chi_Minh'],
    ['america/port-au-prince', 'America/Port-au-Prince'],
    ['antarctica/troll', 'Antarctica/Troll'],
    ['utc', 'UTC'],
    ['Etc/UTC', 'Etc/UTC'],
    ['etc/gmt+5', 'Etc/GMT+5'],
    ['us/eastern', 'US/Eastern'],
  ])('corrects the letter case: %s -> %s', (sent, canonical) => {
    expect(canonicalZone(sent)).toBe(canonical);
  });

  it('returns null for unknown zones and for UTC offsets', () => {
    for (const tz of ['', 'Mars/Olympus', 'Local', '+05:30', '-0800', ' UTC'])
      expect(canonicalZone(tz)).toBeNull();
  });
});
