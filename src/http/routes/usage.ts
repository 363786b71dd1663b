import { Hono } from 'hono';
import { usageReport } from '../../caps/usage.js';
import { query } from '../body.js';
import { type UsageJson, usageQuery } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';

/** GET /v1/usage: runs and their receipts per day and key, counted in the store (docs/spend-caps.md). */
export function usageRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.get('/', async (c) => {
    const q = query(c, usageQuery);
    const report = await usageReport(deps.store, {
      by: q.by,
      zone: deps.config.limits.timezone,
      now: deps.clock.now(),
      from: q.from,
      to: q.to,
    });
    const totals = (t: { runs: number; costUsd: number; inputTokens: number; outputTokens: number }) => ({
      runs: t.runs,
      cost_usd: t.costUsd,
      input_tokens: t.inputTokens,
      output_tokens: t.outputTokens,
    });
    const body: UsageJson = {
      by: report.by,
      timezone: report.timezone,
      from: report.from,
      to: report.to,
      rows: report.rows.map((r) => ({ day: r.day, key: r.key, name: r.name, ...totals(r) })),
      days: report.days.map((d) => ({ day: d.day, ...totals(d) })),
      totals: totals(report.totals),
    };
    return c.json(body);
  });
  return app;
}
