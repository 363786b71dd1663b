import type { SpendCap, SpendDay, SpendScope } from '../../domain/spend.js';
import type { NewNotification } from '../../domain/types.js';
import { SQLITE } from '../sql/dialect.js';
import * as sql from '../sql/usage.js';
import type { SpendState, UsageKey, UsageRow, UsageStore } from '../usage.js';
import type { SqliteDb } from './db.js';

/** Spend caps and usage (migrations/000024_spend_caps.sql). */
export class SqliteUsage implements UsageStore {
  constructor(private readonly db: SqliteDb) {}

  async spendState(day: SpendDay): Promise<SpendState> {
    const { text, values } = sql.daySpendStatement(day);
    return this.db.read(() =>
      sql.toSpendState(
        this.db.sql(text).all(...values) as sql.DaySpendRow[],
        this.db.sql(sql.SESSION_LIMITS).all() as { id: string; limits: string }[],
        this.db.sql(sql.TRIGGER_LIMITS).all() as { id: string; limits: string }[],
      ),
    );
  }

  async usage(by: UsageKey, days: SpendDay[]): Promise<UsageRow[]> {
    if (days.length === 0) return [];
    const { text, values } = sql.usageStatement(SQLITE, by, days);
    return (this.db.sql(text).all(...values) as sql.UsageDbRow[]).map(sql.toUsageRow);
  }

  async noteSpendCap(
    scope: SpendScope,
    id: string | null,
    day: string,
    cap: SpendCap,
    now: number,
    notifications: NewNotification[] = [],
  ): Promise<boolean> {
    return this.db.write(() => {
      if (this.db.sql(sql.NOTE_SPEND_CAP).run(scope, id ?? '', day, cap, now).changes !== 1) return false;
      for (const n of notifications) {
        const { text, values } = sql.insertNoticeNotificationStatement(n);
        this.db.sql(text).run(...values);
      }
      return true;
    });
  }
}
