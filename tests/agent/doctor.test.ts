import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { doctor } from '../../src/agent/doctor.js';
import { defaultConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { FakeClock } from '../support/fake-clock.js';
import { type ModelServer, script, startModelServer } from '../support/model-server.js';

// `drydock doctor` by the date it is given: a retired model is reported with its replacement and not asked;
// one that retires within 30 days is asked, with a warning.

let clock: FakeClock;
let model: ModelServer;

beforeEach(async () => {
  clock = new FakeClock(Date.parse('2027-01-10T12:00:00Z'));
  model = await startModelServer({ clock });
  model.setFallback(script.text('ready'));
});

afterEach(async () => {
  await model.close();
});

function configOn(id: string): Config {
  const c = defaultConfig();
  c.anthropic.model = id;
  c.anthropic.api_key = 'test-key';
  c.anthropic.base_url = model.url;
  return c;
}

const client = () => new Anthropic({ apiKey: 'test-key', baseURL: model.url, maxRetries: 0 });

describe('doctor and the model lifecycle', () => {
  it('warns about a model that retires within 30 days, and still checks it', async () => {
    const report = await doctor(configOn('claude-opus-4-5'), clock.now(), client());
    expect(report.ok).toBe(true);
    expect(report.lines).toContain(
      'warn claude-opus-4-5 retires on 2027-01-22 (in 12 days); move to claude-opus-5-5 before then',
    );
    expect(model.requests).toHaveLength(1);
  });

  it('reports a retired model with its replacement and sends it nothing', async () => {
    clock.set(Date.parse('2027-01-22T00:00:00Z'));
    const report = await doctor(configOn('claude-opus-4-5'), clock.now(), client());
    expect(report.ok).toBe(false);
    expect(report.lines[1]).toBe(
      'FAIL model claude-opus-4-5: claude-opus-4-5 retired on 2027-01-22 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    );
    expect(model.requests).toHaveLength(0);
  });

  it('notes a legacy model', async () => {
    const report = await doctor(configOn('claude-haiku-4-5'), clock.now(), client());
    expect(report.ok).toBe(true);
    expect(report.lines).toContain(
      'note claude-haiku-4-5 is a legacy model (no more updates, may be deprecated later); consider claude-haiku-5-5',
    );
  });
});
