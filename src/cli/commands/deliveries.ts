import { DELIVERY_OUTCOMES } from '../../domain/types.js';
import type { DeliveryJson } from '../../http/contract/index.js';
import {
  age,
  choices,
  dash,
  fields,
  type Group,
  idPath,
  jsonOption,
  nextPage,
  oneOf,
  out,
  positiveInt,
  printedJson,
  printListing,
  queryString,
  runGroup,
  str,
} from './common.js';

// drydock deliveries list|show: webhook deliveries and fires, and what the inbox made of them, over
// /v1/deliveries.

const OUTCOMES = DELIVERY_OUTCOMES;

export const deliveriesGroup: Group = {
  name: 'deliveries',
  summary: 'Webhook deliveries and fires: what each became (queued until the inbox processes it).',
  commands: {
    list: {
      synopsis: '[--outcome O] [--trigger ID] [--limit N] [--before ID] [--json]',
      help: `Lists deliveries, newest first: id, age, source, event, outcome, runs, subject and detail.

  --outcome O           ${choices(OUTCOMES)} (default: all)
  --trigger ID          only those a trigger looked at
  --limit N             at most N (API default 50, max 200)
  --before ID           the page after this delivery (the previous page's last id)
  --json                print the API's JSON body`,
      options: {
        outcome: { type: 'string' },
        trigger: { type: 'string' },
        limit: { type: 'string' },
        before: { type: 'string' },
        ...jsonOption,
      },
      positionals: [],
      async run({ client, values }) {
        const q = queryString({
          outcome: oneOf(values, 'outcome', OUTCOMES),
          trigger_id: str(values, 'trigger'),
          limit: positiveInt(values, 'limit'),
          before: str(values, 'before'),
        });
        const res = await client.request('GET', `/v1/deliveries${q}`);
        printListing<DeliveryJson, { items: DeliveryJson[]; next_before: string | null }>(values, res, {
          empty: 'no deliveries',
          headers: ['ID', 'AGE', 'SOURCE', 'EVENT', 'OUTCOME', 'RUNS', 'SUBJECT', 'DETAIL'],
          row: (d, now) => [
            d.id,
            age(d.received_at, now),
            d.source,
            d.event,
            d.outcome,
            d.run_ids.length ? d.run_ids.join(',') : '-',
            dash(d.subject),
            dash(d.detail),
          ],
          more: (b) =>
            b.next_before
              ? nextPage(
                  'deliveries list',
                  values,
                  ['outcome', 'trigger', 'limit'],
                  ['before', b.next_before],
                )
              : null,
        });
      },
    },

    show: {
      synopsis: 'ID [--json]',
      help: `Shows one delivery: its key (X-GitHub-Delivery, or trigger:idempotency key), event, outcome, detail,
runs, and when it was received and processed.

  --json                print the API's JSON body`,
      options: { ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await client.request('GET', `/v1/deliveries/${idPath(args[0]!)}`);
        if (printedJson(values, res.text)) return;
        const d = res.body as DeliveryJson;
        out(
          fields([
            ['id', d.id],
            ['source', d.source],
            ['key', d.key],
            ['event', d.event],
            ['trigger', d.trigger_id],
            ['outcome', d.outcome],
            ['detail', d.detail],
            ['subject', d.subject],
            ['runs', d.run_ids.join(', ')],
            ['received', d.received_at],
            ['processed', d.processed_at ?? 'not yet (queued)'],
          ]),
        );
      },
    },
  },
};

export const deliveriesCommand = (argv: string[]): Promise<number> => runGroup(deliveriesGroup, argv);
