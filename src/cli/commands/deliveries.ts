import { DELIVERY_OUTCOMES } from '../../domain/types.js';
import type { DeliveryJson } from '../../http/contract/index.js';
import {
  age,
  choices,
  dash,
  fields,
  type Group,
  idPath,
  limitFilter,
  listCommand,
  out,
  runGroup,
  showCommand,
} from './common.js';

// drydock deliveries list|show: webhook deliveries and fires, and what the inbox made of them, over
// /v1/deliveries.

const OUTCOMES = DELIVERY_OUTCOMES;

export const deliveriesGroup: Group = {
  name: 'deliveries',
  summary: 'Webhook deliveries and fires: what each became (queued until the inbox processes it).',
  commands: {
    list: listCommand<DeliveryJson, { items: DeliveryJson[]; next_before: string | null }>({
      command: 'deliveries list',
      about: 'Lists deliveries, newest first: id, age, source, event, outcome, runs, subject and detail.',
      filters: [
        { option: 'outcome', arg: 'O', help: `${choices(OUTCOMES)} (default: all)`, allowed: OUTCOMES },
        { option: 'trigger', arg: 'ID', help: 'only those a trigger looked at', param: 'trigger_id' },
        limitFilter(),
        {
          option: 'before',
          arg: 'ID',
          help: "the page after this delivery (the previous page's last id)",
          next: 'next_before',
        },
      ],
      path: '/v1/deliveries',
      show: {
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
      },
    }),

    show: showCommand<DeliveryJson>({
      about: `Shows one delivery: its key (X-GitHub-Delivery, or trigger:idempotency key), event, outcome, detail,
runs, and when it was received and processed.`,
      path: (id) => `/v1/deliveries/${idPath(id)}`,
      print(d) {
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
    }),
  },
};

export const deliveriesCommand = (argv: string[]): Promise<number> => runGroup(deliveriesGroup, argv);
