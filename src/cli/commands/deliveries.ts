import { WEBHOOK_OUTCOMES } from '../../domain/types.js';
import type { WebhookDeliveryJson } from '../../http/contract/index.js';
import type { Group } from './group.js';
import { choiceFilter, idFilter, limitFilter, listCommand, showCommand } from './listing.js';
import { dash, fields } from './output.js';
import { idPath } from './request.js';
import { age } from './times.js';

// drydock deliveries list|show: webhook deliveries and fires, and what the inbox made of them, over
// /v1/deliveries.

const OUTCOMES = WEBHOOK_OUTCOMES;

/** The columns of a listing of deliveries: here, and a trigger's in `triggers deliveries`. */
export function deliveryColumns(runs: 'RUN' | 'RUNS'): string[] {
  return ['ID', 'AGE', 'SOURCE', 'EVENT', 'OUTCOME', runs, 'SUBJECT', 'DETAIL'];
}

/** A delivery's row under deliveryColumns, given what its outcome and runs columns say. */
export function deliveryRow(
  d: Pick<WebhookDeliveryJson, 'id' | 'received_at' | 'source' | 'event' | 'subject' | 'detail'>,
  now: number,
  outcome: string,
  runs: string,
): string[] {
  return [d.id, age(d.received_at, now), d.source, d.event, outcome, runs, dash(d.subject), dash(d.detail)];
}

/** The triggers that started a run for a delivery ("-" for none; an older daemon: its trigger_id). */
const firedBy = (d: WebhookDeliveryJson): string => {
  const ids = d.trigger_ids ?? (d.trigger_id && d.run_ids.length ? [d.trigger_id] : []);
  return ids.length ? ids.join(',') : '-';
};

/** deliveryColumns with the TRIGGERS column after OUTCOME (or that column's cell put in a row). */
const withTriggers = (cells: string[], triggers = 'TRIGGERS'): string[] => [
  ...cells.slice(0, 5),
  triggers,
  ...cells.slice(5),
];

export const deliveriesGroup: Group = {
  name: 'deliveries',
  summary: 'Webhook deliveries and fires: what each became (queued until the inbox processes it).',
  commands: {
    list: listCommand<WebhookDeliveryJson>({
      about: `Lists deliveries, newest first: id, age, source, event, outcome, the triggers that started a run for it,
its runs, subject and detail.`,
      filters: [
        choiceFilter('outcome', 'O', OUTCOMES, '(default: all)'),
        idFilter('trigger', 'only those a trigger looked at'),
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
        headers: withTriggers(deliveryColumns('RUNS')),
        row: (d, now) =>
          withTriggers(
            deliveryRow(d, now, d.outcome, d.run_ids.length ? d.run_ids.join(',') : '-'),
            firedBy(d),
          ),
      },
    }),

    show: showCommand<WebhookDeliveryJson>({
      about: `Shows one delivery: its key (X-GitHub-Delivery, or trigger:idempotency key), event, the trigger (a
fire's, or the one a GitHub delivery fired), the triggers that started a run for it (fired), outcome, detail,
runs, and when it was received and processed.`,
      path: (id) => `/v1/deliveries/${idPath(id)}`,
      render: (d) =>
        fields([
          ['id', d.id],
          ['source', d.source],
          ['key', d.key],
          ['event', d.event],
          ['trigger', d.trigger_id],
          ['fired', firedBy(d)],
          ['outcome', d.outcome],
          ['detail', d.detail],
          ['subject', d.subject],
          ['runs', d.run_ids.join(', ')],
          ['received', d.received_at],
          ['processed', d.processed_at ?? 'not yet (queued)'],
        ]),
    }),
  },
};
