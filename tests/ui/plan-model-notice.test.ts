import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { seedPlan, signIn, ui } from './helpers.js';

// The plan page says when the model the plan runs on retires within 30 days (or has retired), so the approver
// knows before approving an execution that would fail.

let h: Harness;
afterEach(async () => {
  await h.close();
});

async function pageFor(model: string): Promise<string> {
  const { plan, run } = await seedPlan(h);
  await h.store.updateRun(run.id, { model });
  const me = await signIn(h.app, h.tokens.approver);
  const res = await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie });
  expect(res.status).toBe(200);
  return res.text;
}

describe('the plan page and the model’s retirement', () => {
  it('shows a notice for a plan on a model that retires within 30 days', async () => {
    h = await createHarness({ now: Date.parse('2027-01-10T12:00:00Z') });
    const page = await pageFor('claude-opus-4-5');
    expect(page).toContain(
      '<p class="warning" id="model-notice" role="status">claude-opus-4-5 retires on 2027-01-22 (in 12 days); move to claude-opus-5-5 before then</p>',
    );
  });

  it('shows none for a model that is far from retiring or not retiring at all', async () => {
    h = await createHarness({ now: Date.parse('2026-12-04T12:00:00Z') });
    expect(await pageFor('claude-opus-4-5')).not.toContain('id="model-notice"');
    expect(await pageFor('claude-sonnet-5-5')).not.toContain('id="model-notice"');
  });
});
