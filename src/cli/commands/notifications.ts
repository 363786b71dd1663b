import { NOTIFICATION_EVENTS } from '../../domain/notifications.js';
import { NOTIFICATION_STATUSES } from '../../domain/types.js';
import type { NotificationJson } from '../../http/contract/index.js';
import type { Group } from './group.js';
import { choiceFilter, cursorFilter, limitFilter, listCommand } from './listing.js';
import { dash, oneLine } from './output.js';
import { age } from './times.js';

// drydock notifications list: the outbound notifications outbox over /v1/notifications.

const STATUSES = NOTIFICATION_STATUSES;
const EVENTS = NOTIFICATION_EVENTS;

export const notificationsGroup: Group = {
  name: 'notifications',
  summary: 'Outbound notifications (webhooks): what was announced, to whom, and whether it arrived.',
  commands: {
    list: listCommand<NotificationJson>({
      about: `Lists notifications, newest first: id, age, event, status, attempts, receiver, last error and the
title of what was announced.`,
      filters: [
        choiceFilter('status', 'S', STATUSES, '(default: all)'),
        choiceFilter('event', 'E', EVENTS, '(default: all)'),
        limitFilter(),
        cursorFilter,
      ],
      path: '/v1/notifications',
      show: {
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
      },
    }),
  },
};
