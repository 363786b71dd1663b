import type { Config } from '../config/schema.js';
import { type SpendCapHit, type SpendDay, spendCapDetails, spendCapMessage } from '../domain/spend.js';
import type { NewNotification } from '../domain/types.js';
import { commonData } from './announce.js';
import { NO_FACTS } from './facts.js';
import { type AnnouncementData, renderBody } from './format.js';
import { notificationId } from './notifier.js';
import { shownUrl, subscribers, uiLink, webhookKey } from './webhooks.js';

/**
 * The outbox rows of `limit.reached` (docs/spend-caps.md) for the webhooks that want it: a spend cap met, once
 * per scope and day. Not a run's event: the store writes them in the transaction that notes the cap
 * (`noteSpendCap`), so the replica that notes it first announces it and no other does.
 */
export function limitReachedNotifications(
  config: Pick<Config, 'notifications'> & { server: Pick<Config['server'], 'public_url'> },
  hit: SpendCapHit,
  day: SpendDay,
  now: number,
): NewNotification[] {
  const details = spendCapDetails(hit);
  const data: AnnouncementData = {
    run_id: null,
    // Not about one run: the fields every payload has are there, empty (the cap is named by scope, scope_id).
    ...commonData(NO_FACTS),
    title: spendCapMessage(hit),
    scope: details.scope,
    scope_id: details.id,
    cap: details.cap,
    limit: details.limit,
    spent: details.spent,
    day: day.day,
    resets_at: details.resets_at,
    links: { usage: uiLink(config.server.public_url, '/ui/usage') },
  };
  return subscribers(config.notifications.webhooks, 'limit.reached').map((hook) => {
    const id = notificationId();
    return {
      id,
      eventRowid: null,
      webhook: webhookKey(hook.url),
      webhookUrl: shownUrl(hook.url),
      event: 'limit.reached',
      runId: null,
      planId: null,
      data: data as unknown as Record<string, unknown>,
      body: renderBody(hook.format, {
        id,
        event: 'limit.reached',
        created_at: new Date(now).toISOString(),
        data,
      }),
      nextAttemptAt: now,
      createdAt: now,
    };
  });
}
