import { USAGE_KEYS } from '../../domain/spend.js';
import type { UsageJson } from '../../http/contract/index.js';
import { choices, JSON_HELP, jsonOption, oneOf, RemoteUsageError, str } from './args.js';
import type { Group } from './group.js';
import { out, printedJson, table } from './output.js';

// drydock usage show: where money went, over GET /v1/usage (docs/spend-caps.md).

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function dateOption(values: Parameters<typeof str>[0], name: string): string | undefined {
  const v = str(values, name);
  if (v !== undefined && !DATE.test(v))
    throw new RemoteUsageError(`--${name} must be a date, YYYY-MM-DD, got "${v}"`);
  return v;
}

export const usageGroup: Group = {
  name: 'usage',
  summary: "Where money went: runs and their receipts per day of the daemon's limits.timezone.",
  commands: {
    show: {
      synopsis: '[--by trigger|session|model] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]',
      help: `Shows runs and their cost per day and trigger, session or model, then the total, counted from the runs'
receipts by the day they were created (in the daemon's limits.timezone).

  --by K                ${choices(USAGE_KEYS)} (default: session)
  --from D              the first day (default: 29 days before --to)
  --to D                the last day (default: today)
${JSON_HELP}`,
      options: { by: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ...jsonOption },
      positionals: [],
      async run({ client, values }) {
        const params = new URLSearchParams();
        const by = oneOf(values, 'by', USAGE_KEYS);
        const from = dateOption(values, 'from');
        const to = dateOption(values, 'to');
        if (by) params.set('by', by);
        if (from) params.set('from', from);
        if (to) params.set('to', to);
        const query = params.size ? `?${params}` : '';
        const res = await client.request('GET', `/v1/usage${query}`);
        if (printedJson(values, res.text)) return;
        const u = res.body as UsageJson;
        const usd = (v: number) => `$${v.toFixed(2)}`;
        const rows = u.rows.map((r) => [
          r.day,
          r.name ?? r.key ?? '-',
          String(r.runs),
          usd(r.cost_usd),
          String(r.input_tokens),
          String(r.output_tokens),
        ]);
        if (rows.length) {
          out(table(['DAY', u.by.toUpperCase(), 'RUNS', 'COST', 'INPUT', 'OUTPUT'], rows));
        }
        out(
          `${u.from} to ${u.to} (${u.timezone}): ${u.totals.runs} run${u.totals.runs === 1 ? '' : 's'}, ${usd(u.totals.cost_usd)}`,
        );
      },
    },
  },
};
