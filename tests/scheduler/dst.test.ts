import { describe, expect, it } from 'vitest';
import { nextMatch } from '../../src/scheduler/cron.js';
import { matchesBetween } from '../support/cron.js';

// Real zones, real 2026 transitions:
//   America/New_York  2026-03-08 02:00 EST -> 03:00 EDT (07:00Z)   2026-11-01 02:00 EDT -> 01:00 EST (06:00Z)
//   Europe/Berlin     2026-03-29 02:00 CET -> 03:00 CEST (01:00Z)  2026-10-25 03:00 CEST -> 02:00 CET (01:00Z)

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const isos = (ms: number[]): string[] => ms.map((m) => new Date(m).toISOString());
const MIN = 60_000;

function gaps(slots: number[]): number[] {
  return slots.slice(1).map((s, i) => s - slots[i]!);
}

describe('spring forward: a fixed time in the skipped hour fires once, at the first valid time after it', () => {
  it('New York, 30 2 * * *: 03:00 EDT on 2026-03-08, back to 02:30 the next day', () => {
    expect(
      isos(matchesBetween('30 2 * * *', NY, at('2026-03-06T12:00:00Z'), at('2026-03-09T12:00:00Z'), 10)),
    ).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT: 02:30 does not exist
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('New York: recomputing from the shifted slot does not fire again that day', () => {
    expect(iso(nextMatch('30 2 * * *', NY, at('2026-03-08T07:00:00Z')))).toBe('2026-03-09T06:30:00.000Z');
    expect(iso(nextMatch('30 2 * * *', NY, at('2026-03-08T06:59:59.999Z')))).toBe('2026-03-08T07:00:00.000Z');
  });

  it('Berlin, 30 2 * * *: 03:00 CEST on 2026-03-29', () => {
    expect(
      isos(matchesBetween('30 2 * * *', BERLIN, at('2026-03-28T12:00:00Z'), at('2026-03-30T12:00:00Z'), 10)),
    ).toEqual([
      '2026-03-29T01:00:00.000Z', // 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('a list job fires at the end of the gap too (croner needs fixedTimeRule no-wildcard for this)', () => {
    expect(
      isos(matchesBetween('30 2,14 * * *', NY, at('2026-03-08T00:00:00Z'), at('2026-03-09T00:00:00Z'), 10)),
    ).toEqual([
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-08T18:30:00.000Z', // 14:30 EDT
    ]);
  });

  it('two times in the gap that both land at its end fire once', () => {
    expect(
      isos(matchesBetween('0,30 2 * * *', NY, at('2026-03-08T00:00:00Z'), at('2026-03-09T00:00:00Z'), 10)),
    ).toEqual(['2026-03-08T07:00:00.000Z']);
  });
});

describe('fall back: a fixed time in the repeated hour fires exactly once', () => {
  // The local day 2026-11-01 in New York runs from 04:00Z to 05:00Z the next day (25 hours).
  const nyDay: [number, number] = [at('2026-11-01T04:00:00Z'), at('2026-11-02T05:00:00Z')];
  // The local day 2026-10-25 in Berlin runs from 2026-10-24T22:00Z to 2026-10-25T23:00Z.
  const berlinDay: [number, number] = [at('2026-10-24T22:00:00Z'), at('2026-10-25T23:00:00Z')];

  it('New York, 30 1 * * *: only the first 01:30 (EDT)', () => {
    expect(isos(matchesBetween('30 1 * * *', NY, ...nyDay, 10))).toEqual(['2026-11-01T05:30:00.000Z']);
  });

  it('New York: recomputing from inside the second pass does not yield the second 01:30', () => {
    expect(iso(nextMatch('30 1 * * *', NY, at('2026-11-01T06:00:00Z')))).toBe('2026-11-02T06:30:00.000Z');
  });

  it('Berlin, 30 2 * * *: only the first 02:30 (CEST)', () => {
    expect(isos(matchesBetween('30 2 * * *', BERLIN, ...berlinDay, 10))).toEqual([
      '2026-10-25T00:30:00.000Z',
    ]);
  });

  it('a list job fires once in the repeated hour too (croner needs fixedTimeRule no-wildcard for this)', () => {
    expect(isos(matchesBetween('30 1,13 * * *', NY, ...nyDay, 10))).toEqual([
      '2026-11-01T05:30:00.000Z', // 01:30 EDT, not again at 01:30 EST (06:30Z)
      '2026-11-01T18:30:00.000Z', // 13:30 EST
    ]);
    expect(isos(matchesBetween('30 2,14 * * *', BERLIN, ...berlinDay, 10))).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST, not again at 02:30 CET (01:30Z)
      '2026-10-25T13:30:00.000Z', // 14:30 CET
    ]);
  });
});

describe('an interval job keeps firing every 15 real minutes through both transitions', () => {
  it('New York spring forward: 01:45 EST is followed by 03:00 EDT, 15 minutes later', () => {
    const day = matchesBetween(
      '*/15 * * * *',
      NY,
      at('2026-03-08T05:00:00Z'),
      at('2026-03-09T04:00:00Z'),
      500,
    );
    expect(day).toHaveLength(23 * 4); // a 23-hour local day
    expect(new Set(gaps(day))).toEqual(new Set([15 * MIN]));
    expect(
      isos(matchesBetween('*/15 * * * *', NY, at('2026-03-08T06:30:00Z'), at('2026-03-08T07:15:00Z'), 10)),
    ).toEqual([
      '2026-03-08T06:45:00.000Z', // 01:45 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-08T07:15:00.000Z', // 03:15 EDT
    ]);
  });

  it('New York fall back: fires in both occurrences of 01:00-01:45', () => {
    const day = matchesBetween(
      '*/15 * * * *',
      NY,
      at('2026-11-01T04:00:00Z'),
      at('2026-11-02T05:00:00Z'),
      500,
    );
    expect(day).toHaveLength(25 * 4); // a 25-hour local day
    expect(new Set(gaps(day))).toEqual(new Set([15 * MIN]));
    expect(
      isos(matchesBetween('*/15 * * * *', NY, at('2026-11-01T04:59:00Z'), at('2026-11-01T07:00:00Z'), 20)),
    ).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T05:15:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T05:45:00.000Z',
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T06:15:00.000Z',
      '2026-11-01T06:30:00.000Z',
      '2026-11-01T06:45:00.000Z',
      '2026-11-01T07:00:00.000Z', // 02:00 EST
    ]);
  });

  it('Berlin: 23-hour and 25-hour days with no gap beyond 15 minutes', () => {
    const spring = matchesBetween(
      '*/15 * * * *',
      BERLIN,
      at('2026-03-28T23:00:00Z'),
      at('2026-03-29T22:00:00Z'),
      500,
    );
    expect(spring).toHaveLength(23 * 4);
    expect(new Set(gaps(spring))).toEqual(new Set([15 * MIN]));
    const fall = matchesBetween(
      '*/15 * * * *',
      BERLIN,
      at('2026-10-24T22:00:00Z'),
      at('2026-10-25T23:00:00Z'),
      500,
    );
    expect(fall).toHaveLength(25 * 4);
    expect(new Set(gaps(fall))).toEqual(new Set([15 * MIN]));
  });

  it('an hourly job at :30 fires in both passes of the repeated hour and skips the missing one', () => {
    expect(
      isos(matchesBetween('30 * * * *', NY, at('2026-11-01T04:45:00Z'), at('2026-11-01T07:45:00Z'), 10)),
    ).toEqual([
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T06:30:00.000Z', // 01:30 EST
      '2026-11-01T07:30:00.000Z', // 02:30 EST
    ]);
    expect(
      isos(matchesBetween('30 * * * *', NY, at('2026-03-08T05:45:00Z'), at('2026-03-08T07:45:00Z'), 10)),
    ).toEqual([
      '2026-03-08T06:30:00.000Z', // 01:30 EST
      '2026-03-08T07:30:00.000Z', // 03:30 EDT; 02:30 does not exist
    ]);
  });
});

describe('zones with unusual shifts (the brute-force test covers them at random; these are the README examples)', () => {
  it('Australia/Lord_Howe jumps 02:00 -> 02:30 (+10:30 -> +11:00): 02:15 fires at 02:30 that day', () => {
    expect(
      isos(
        matchesBetween(
          '15 2 * * *',
          'Australia/Lord_Howe',
          at('2026-10-02T12:00:00Z'),
          at('2026-10-05T12:00:00Z'),
          10,
        ),
      ),
    ).toEqual([
      '2026-10-02T15:45:00.000Z', // 02:15 +10:30 on 10-03
      '2026-10-03T15:30:00.000Z', // 02:30 +11:00 on 10-04: 02:15 does not exist
      '2026-10-04T15:15:00.000Z', // 02:15 +11:00 on 10-05
    ]);
  });

  it('Antarctica/Troll jumps 01:00 -> 03:00 (+00 -> +02): 02:00 fires at 03:00 that day', () => {
    expect(
      isos(
        matchesBetween(
          '0 2 * * *',
          'Antarctica/Troll',
          at('2026-03-27T12:00:00Z'),
          at('2026-03-30T12:00:00Z'),
          10,
        ),
      ),
    ).toEqual([
      '2026-03-28T02:00:00.000Z', // 02:00 +00
      '2026-03-29T01:00:00.000Z', // 03:00 +02: 02:00 does not exist
      '2026-03-30T00:00:00.000Z', // 02:00 +02
    ]);
  });
});
