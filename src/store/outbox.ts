import type {
  NewNotification,
  Notification,
  NotificationOutcome,
  NotificationStatus,
  Page,
  Plan,
  PlanDelivery,
  PlanDeliveryStatus,
} from '../domain/types.js';

/** Work done after the fact: delivering executed plans, and the notification outbox. */
export interface OutboxStore {
  // ---- delivering executed plans (src/delivery/)
  /** Executed plans the delivery worker has not looked at yet (delivery null), oldest first. */
  listUndecidedPlanDeliveries(limit: number): Promise<Plan[]>;
  /** Plans whose delivery is pending or retrying, due at `now` and held by no worker; earliest first. */
  duePlanDeliveries(now: number, limit: number): Promise<string[]>;
  /** When the next pending or retrying delivery is due (or its holder's claim lapses); null: none. */
  nextPlanDeliveryAt(): Promise<number | null>;
  /**
   * Holds a due delivery for one attempt until `until` in `holder`'s name (a replica's), counting the attempt,
   * in one transaction. The plan, or null when it is not due or another worker holds it.
   */
  claimPlanDelivery(planId: string, now: number, until: number, holder: string): Promise<Plan | null>;
  /**
   * Ends the claims `holder` holds on pending or retrying deliveries (a restart of the replica that was
   * killed mid-delivery): they are due again at once. How many.
   */
  releasePlanDeliveryClaims(holder: string): Promise<number>;
  /** Writes delivery fields if the delivery's status is one of `from` (null: not looked at yet); whether it did. */
  updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean>;

  // ---- the notification outbox (src/notify/)
  /** The rowid of the last event the notifier has looked at; null before notifications ever started. */
  notificationCursor(): Promise<number | null>;
  /**
   * In one transaction: writes the rows (one whose (event, webhook) exists already is skipped) and moves the
   * cursor forward to `cursor` (never back). Returns how many rows were new.
   */
  enqueueNotifications(rows: NewNotification[], cursor: number): Promise<number>;
  /** Claims pending rows due at `now` (oldest first): one more attempt each, held until `holdUntil`. */
  claimNotifications(now: number, holdUntil: number, limit: number): Promise<Notification[]>;
  /** Records an attempt's outcome on a row still pending. */
  settleNotification(id: string, outcome: NotificationOutcome): Promise<void>;
  /** When the earliest pending row is due (null: none pends). */
  nextNotificationDue(): Promise<number | null>;
  /** Newest first, keyset-paginated. */
  listNotifications(filter: {
    status?: NotificationStatus | undefined;
    event?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Promise<Page<Notification>>;
  countNotifications(): Promise<Record<NotificationStatus, number>>;
}

/** Delivery fields to write; undefined leaves a field as it is, null clears it. */
export type PlanDeliveryPatch = Partial<PlanDelivery>;
