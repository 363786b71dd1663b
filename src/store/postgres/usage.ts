import type { SpendCap, SpendDay, SpendScope } from '../../domain/spend.js';
import type { NewNotification } from '../../domain/types.js';
import { POSTGRES } from '../sql/dialect.js';
import * as sql from '../sql/usage.js';
import type { SpendState, UsageKey, UsageRow, UsageStore } from '../usage.js';
import type { PgDb } from './db.js';

/** Spend caps and usage (migrations/postgres/000014_spend_caps.sql). */
export class PgUsage implements UsageStore {
  constructor(private readonly db: PgDb) {}

  async spendState(day: SpendDay): Promise<SpendState> {
    const { text, values } = sql.daySpendStatement(day);
    const [rows, sessions, triggers] = await Promise.all([
      this.db.rows<sql.DaySpendRow>(text, values),
      this.db.rows<{ id: string; limits: string }>(sql.SESSION_LIMITS),
      this.db.rows<{ id: string; limits: string }>(sql.TRIGGER_LIMITS),
    ]);
    return sql.toSpendState(rows, sessions, triggers);
  }

  async usage(by: UsageKey, days: SpendDay[]): Promise<UsageRow[]> {
    if (days.length === 0) return [];
    const { text, values } = sql.usageStatement(POSTGRES, by, days);
    return (await this.db.rows<sql.UsageDbRow>(text, values)).map(sql.toUsageRow);
  }

  async noteSpendCap(
    scope: SpendScope,
    id: string | null,
    day: string,
    cap: SpendCap,
    now: number,
    notifications: NewNotification[] = [],
  ): Promise<boolean> {
    return this.db.tx(async (q) => {
      if ((await q.exec(sql.NOTE_SPEND_CAP, [scope, id ?? '', day, cap, now])) !== 1) return false;
      for (const n of notifications) {
        const { text, values } = sql.insertNoticeNotificationStatement(n);
        await q.exec(text, values);
      }
      return true;
    });
  }
}
