import { NOTIFICATION_EVENTS } from '../../domain/notifications.js';
import { NOTIFICATION_STATUSES } from '../../domain/types.js';
import type { NotificationJson } from '../../http/contract/index.js';
import {
  age,
  choices,
  dash,
  type Group,
  jsonOption,
  nextPage,
  oneLine,
  oneOf,
  positiveInt,
  printListing,
  queryString,
  runGroup,
  str,
} from './common.js';

// drydock notifications list: the outbound notifications outbox over /v1/notifications.

const STATUSES = NOTIFICATION_STATUSES;
const EVENTS = NOTIFICATION_EVENTS;

export const notificationsGroup: Group = {
  name: 'notifications',
  summary: 'Outbound notifications (webhooks): what was announced, to whom, and whether it arrived.',
  commands: {
    list: {
      synopsis: '[--status S] [--event E] [--limit N] [--cursor C] [--json]',
      help: `Lists notifications, newest first: id, age, event, status, attempts, receiver, last error and the
title of what was announced.

  --status S            ${choices(STATUSES)} (default: all)
  --event E             ${choices(EVENTS)} (default: all)
  --limit N             at most N (API default 50, max 200)
  --cursor C            the next page (from a previous listing)
  --json                print the API's JSON body`,
      options: {
        status: { type: 'string' },
        event: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        ...jsonOption,
      },
      positionals: [],
      async run({ client, values }) {
        const q = queryString({
          status: oneOf(values, 'status', STATUSES),
          event: oneOf(values, 'event', EVENTS),
          limit: positiveInt(values, 'limit'),
          cursor: str(values, 'cursor'),
        });
        const res = await client.request('GET', `/v1/notifications${q}`);
        printListing<NotificationJson, { items: NotificationJson[]; next_cursor: string | null }>(
          values,
          res,
          {
            empty: 'no notifications',
            headers: ['ID', 'AGE', 'EVENT', 'STATUS', 'ATTEMPTS', 'WEBHOOK', 'LAST_ERROR', 'TITLE'],
            row: (n, now) => [
              n.id,
              age(n.created_at, now),
              n.event,
              n.status,
              `${n.attempts}/${n.max_attempts}`,
              n.webhook.url,
              dash(n.last_error),
              oneLine(typeof n.data.title === 'string' ? n.data.title : '', 50),
            ],
            more: (b) =>
              b.next_cursor
                ? nextPage(
                    'notifications list',
                    values,
                    ['status', 'event', 'limit'],
                    ['cursor', b.next_cursor],
                  )
                : null,
          },
        );
      },
    },
  },
};

export const notificationsCommand = (argv: string[]): Promise<number> => runGroup(notificationsGroup, argv);
