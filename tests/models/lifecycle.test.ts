import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { findModel, modelLifecycleWarnings, modelProblems } from '../../src/models/catalogue.js';
import { lifecycleMessage, modelState, startOfDay } from '../../src/models/lifecycle.js';

const at = (iso: string) => Date.parse(iso);
const config = defaultConfig();
const stateOf = (id: string, iso: string) => modelState(findModel(config, id), at(iso));

describe('a model’s state by date', () => {
  it('Sonnet 4.5: deprecated, then retiring within 30 days, retired from the start of 2026-11-30 (UTC)', () => {
    expect(stateOf('claude-sonnet-4-5', '2026-10-30T23:59:59Z')).toEqual({
      state: 'deprecated',
      retiresOn: '2026-11-30',
      replacement: 'claude-sonnet-5-5',
    });
    // Exactly 30 days before: retiring.
    expect(stateOf('claude-sonnet-4-5', '2026-10-31T00:00:00Z')).toEqual({
      state: 'retiring',
      retiresOn: '2026-11-30',
      daysLeft: 30,
      replacement: 'claude-sonnet-5-5',
    });
    // The day before.
    expect(stateOf('claude-sonnet-4-5', '2026-11-29T23:59:59Z')).toMatchObject({
      state: 'retiring',
      daysLeft: 1,
    });
    // The day, from its first millisecond, and after.
    for (const when of ['2026-11-30T00:00:00Z', '2026-11-30T18:00:00Z', '2026-12-04T09:00:00Z']) {
      expect(stateOf('claude-sonnet-4-5', when)).toEqual({
        state: 'retired',
        retiredOn: '2026-11-30',
        replacement: 'claude-sonnet-5-5',
      });
    }
    // Its dated ID is the same model.
    expect(stateOf('claude-sonnet-4-5-20250929', '2026-12-04T09:00:00Z').state).toBe('retired');
  });

  it('as the docs list them on 2026-12-04', () => {
    const today = '2026-12-04T12:00:00Z';
    const states = Object.fromEntries(
      [
        'claude-sonnet-5-5',
        'claude-opus-5-5',
        'claude-haiku-5-5',
        'claude-fable-5-2',
        'claude-haiku-4-5',
        'claude-sonnet-4-6',
        'claude-opus-4-8',
        'claude-fable-5',
        'claude-opus-4-5',
        'claude-sonnet-4-5',
        'claude-opus-4-1',
        'claude-opus-4',
        'claude-sonnet-4',
      ].map((id) => [id, stateOf(id, today)]),
    );
    expect(states).toEqual({
      'claude-sonnet-5-5': { state: 'active' },
      'claude-opus-5-5': { state: 'active' },
      'claude-haiku-5-5': { state: 'active' },
      'claude-fable-5-2': { state: 'active' },
      'claude-haiku-4-5': { state: 'legacy', replacement: 'claude-haiku-5-5' },
      'claude-sonnet-4-6': { state: 'legacy', replacement: 'claude-sonnet-5-5' },
      'claude-opus-4-8': { state: 'legacy', replacement: 'claude-opus-5-5' },
      'claude-fable-5': { state: 'legacy', replacement: 'claude-fable-5-1' },
      'claude-opus-4-5': { state: 'deprecated', retiresOn: '2027-01-22', replacement: 'claude-opus-5-5' },
      'claude-sonnet-4-5': { state: 'retired', retiredOn: '2026-11-30', replacement: 'claude-sonnet-5-5' },
      'claude-opus-4-1': { state: 'retired', retiredOn: '2026-08-05', replacement: 'claude-opus-5-5' },
      'claude-opus-4': { state: 'retired', retiredOn: '2026-06-15', replacement: 'claude-opus-5-5' },
      'claude-sonnet-4': { state: 'retired', retiredOn: '2026-06-15', replacement: 'claude-sonnet-5-5' },
    });
  });

  it('says each state once: an error for retired, a warning for deprecated and retiring, a note for legacy', () => {
    expect(modelProblems(config, 'claude-sonnet-4-5', at('2026-11-30T00:00:00Z'))).toEqual({
      errors: [
        'claude-sonnet-4-5 retired on 2026-11-30 and no longer answers; use claude-sonnet-5-5 (docs/models.md)',
      ],
      warnings: [],
      notes: [],
    });
    expect(modelProblems(config, 'claude-opus-4-5', at('2027-01-10T00:00:00Z')).warnings).toEqual([
      'claude-opus-4-5 retires on 2027-01-22 (in 12 days); move to claude-opus-5-5 before then',
    ]);
    expect(modelProblems(config, 'claude-opus-4-5', at('2026-12-04T00:00:00Z')).warnings).toEqual([
      'claude-opus-4-5 is deprecated and retires on 2027-01-22; move to claude-opus-5-5',
    ]);
    expect(modelProblems(config, 'claude-haiku-4-5', at('2026-12-04T00:00:00Z'))).toEqual({
      errors: [],
      warnings: [],
      notes: [
        'claude-haiku-4-5 is a legacy model (no more updates, may be deprecated later); consider claude-haiku-5-5',
      ],
    });
    expect(lifecycleMessage('claude-sonnet-5-5', { state: 'active' })).toBeUndefined();
  });

  it('what /readyz and the plan page show: only retiring and retired, not a deprecation months away', () => {
    expect(modelLifecycleWarnings(config, 'claude-opus-4-5', at('2026-12-22T23:59:59Z'))).toEqual([]);
    expect(modelLifecycleWarnings(config, 'claude-opus-4-5', at('2026-12-23T00:00:00Z'))).toEqual([
      'claude-opus-4-5 retires on 2027-01-22 (in 30 days); move to claude-opus-5-5 before then',
    ]);
    expect(modelLifecycleWarnings(config, 'claude-opus-4-5', at('2027-01-22T00:00:00Z'))).toEqual([
      'claude-opus-4-5 retired on 2027-01-22 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    ]);
    expect(modelLifecycleWarnings(config, 'claude-haiku-4-5', at('2026-12-04T00:00:00Z'))).toEqual([]);
  });

  it('reads only real calendar dates', () => {
    expect(startOfDay('2026-11-30')).toBe(Date.UTC(2026, 10, 30));
    for (const bad of ['2026-02-30', '2026-13-01', '30.11.2026', '2026-11-30T00:00Z', '']) {
      expect(startOfDay(bad)).toBeUndefined();
    }
  });
});

describe('models.<id> lifecycle overrides', () => {
  const parse = (models: unknown) => configSchema.safeParse({ models });
  const issues = (models: unknown) => {
    const r = parse(models);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('take retires_on, deprecated_on, legacy and replacement; null clears the catalogue’s', () => {
    const r = parse({
      'claude-sonnet-5-5': { retires_on: '2027-03-01', replacement: 'claude-opus-5-5' },
      'claude-sonnet-4-5': { retires_on: null, deprecated_on: null },
      'claude-haiku-4-5': { legacy: null },
    });
    expect(r.success).toBe(true);
    const c = r.data!;
    const now = at('2026-12-04T00:00:00Z');
    expect(modelState(findModel(c, 'claude-sonnet-5-5'), now)).toEqual({
      state: 'deprecated',
      retiresOn: '2027-03-01',
      replacement: 'claude-opus-5-5',
    });
    // A deployment that keeps serving Sonnet 4.5 says so: no retirement, no deprecation.
    expect(modelState(findModel(c, 'claude-sonnet-4-5'), now)).toEqual({ state: 'active' });
    expect(findModel(c, 'claude-sonnet-4-5').replacement).toBe('claude-sonnet-5-5');
    expect(modelState(findModel(c, 'claude-haiku-4-5'), now).state).toBe('active');
  });

  it('still read the older status and status_date: a dated deprecation or retirement is retires_on', () => {
    const r = parse({
      'claude-opus-5': { status: 'deprecated', status_date: '2027-02-01', replacement: 'claude-opus-5-5' },
      'claude-opus-4-8': { status: 'retired', status_date: '2026-10-01' },
      'claude-sonnet-4-5': { status: 'active' },
    });
    expect(r.success).toBe(true);
    const c = r.data!;
    expect(c.models['claude-opus-5']).toEqual({ retires_on: '2027-02-01', replacement: 'claude-opus-5-5' });
    const now = at('2026-12-04T00:00:00Z');
    expect(modelState(findModel(c, 'claude-opus-5'), now).state).toBe('deprecated');
    expect(modelState(findModel(c, 'claude-opus-4-8'), now)).toEqual({
      state: 'retired',
      retiredOn: '2026-10-01',
      replacement: 'claude-opus-5-5',
    });
    expect(modelState(findModel(c, 'claude-sonnet-4-5'), now).state).toBe('active');
  });

  it('refuse, every problem listed, what the older form cannot say and mixed or invalid dates', () => {
    expect(
      issues({
        a: { status: 'retired' },
        b: { status_date: '2027-01-01' },
        c: { status: 'deprecated', status_date: '2027-01-01', retires_on: '2027-01-01' },
        d: { retires_on: '2027-02-30' },
        e: { deprecated_on: 'soon' },
      }),
    ).toEqual([
      'models.a.status: retired needs status_date (the retirement date); or write retires_on: YYYY-MM-DD',
      'models.b.status_date: goes with status; write retires_on instead',
      'models.c.status: is the older form of retires_on and deprecated_on: write one form, not both',
      'models.d.retires_on: expected a date such as 2027-01-31 (YYYY-MM-DD)',
      'models.e.deprecated_on: expected a date such as 2027-01-31 (YYYY-MM-DD)',
    ]);
  });
});
