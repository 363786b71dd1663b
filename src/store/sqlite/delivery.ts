import type Database from 'better-sqlite3';
import type { Plan, PlanDeliveryStatus } from '../../domain/types.js';
import type { PlanDeliveryPatch } from '../store.js';
import { type PlanRow, toPlan } from './rows.js';
import { Statements } from './statements.js';

// The SQL of delivering executed plans (src/delivery/): the delivery columns of `plans` (migration 000012).

const PLAN_COLUMNS = `plans.*, (SELECT COUNT(*) FROM decisions d WHERE d.plan_id = plans.id AND d.kind = 'approve') AS approvals`;

/** Patch field -> column. */
const COLUMNS: Record<keyof PlanDeliveryPatch, string> = {
  status: 'delivery_status',
  branch: 'delivery_branch',
  remote: 'delivery_remote',
  commit: 'delivery_commit',
  pushedAt: 'delivery_pushed_at',
  pullRequestUrl: 'delivery_pr_url',
  pullRequestNumber: 'delivery_pr_number',
  commentUrl: 'delivery_comment_url',
  attempts: 'delivery_attempts',
  lastError: 'delivery_last_error',
  nextAttemptAt: 'delivery_next_at',
  claimedUntil: 'delivery_claimed_until',
  settledAt: 'delivery_settled_at',
};

export class PlanDeliverySql {
  private readonly statements: Statements;

  constructor(private readonly db: Database.Database) {
    this.statements = new Statements(db);
  }

  private sql(text: string): Database.Statement {
    return this.statements.get(text);
  }

  undecided(limit: number): Plan[] {
    const rows = this.sql(
      `SELECT ${PLAN_COLUMNS} FROM plans WHERE status = 'executed' AND delivery_status IS NULL
       ORDER BY created_at, id LIMIT ?`,
    ).all(limit) as PlanRow[];
    return rows.map(toPlan);
  }

  due(now: number, limit: number): string[] {
    return this.sql(
      `SELECT id FROM plans WHERE delivery_status IN ('pending', 'retrying') AND delivery_next_at <= ?
         AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= ?)
       ORDER BY delivery_next_at, id LIMIT ?`,
    )
      .pluck()
      .all(now, now, limit) as string[];
  }

  /** The earliest time something is due: a pending delivery, or a held one whose holder may have died. */
  nextAt(): number | null {
    const v = this.sql(
      `SELECT MIN(MAX(delivery_next_at, COALESCE(delivery_claimed_until, 0))) FROM plans
       WHERE delivery_status IN ('pending', 'retrying')`,
    )
      .pluck()
      .get() as number | null;
    return v ?? null;
  }

  claim(planId: string, now: number, until: number): Plan | null {
    return this.db
      .transaction(() => {
        const taken = this.sql(
          `UPDATE plans SET delivery_claimed_until = ?, delivery_attempts = delivery_attempts + 1
           WHERE id = ? AND delivery_status IN ('pending', 'retrying') AND delivery_next_at <= ?
             AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= ?)`,
        ).run(until, planId, now, now).changes;
        if (taken !== 1) return null;
        const row = this.sql(`SELECT ${PLAN_COLUMNS} FROM plans WHERE id = ?`).get(planId) as PlanRow;
        return toPlan(row);
      })
      .immediate();
  }

  update(planId: string, from: readonly (PlanDeliveryStatus | null)[], patch: PlanDeliveryPatch): boolean {
    const keys = (Object.keys(patch) as (keyof PlanDeliveryPatch)[]).filter((k) => patch[k] !== undefined);
    if (!keys.length) return false;
    const set = keys.map((k) => `${COLUMNS[k]} = ?`).join(', ');
    const statuses = from.filter((s): s is PlanDeliveryStatus => s !== null);
    const conditions = [
      ...(statuses.length ? [`delivery_status IN (${statuses.map(() => '?').join(', ')})`] : []),
      ...(from.includes(null) ? ['delivery_status IS NULL'] : []),
    ];
    if (!conditions.length) return false;
    return (
      this.sql(`UPDATE plans SET ${set} WHERE id = ? AND (${conditions.join(' OR ')})`).run(
        ...keys.map((k) => patch[k] as string | number | null),
        planId,
        ...statuses,
      ).changes === 1
    );
  }
}
