import type { Page, Session } from '../../domain/types.js';
import { page } from '../paging.js';
import { type SessionRow, toSession } from '../rows.js';
import type { NewSession, SessionFilter, SessionStore } from '../sessions.js';
import * as sql from '../sql/sessions.js';
import type { SqliteDb } from './db.js';

export class SqliteSessions implements SessionStore {
  constructor(private readonly db: SqliteDb) {}

  async createSession(s: NewSession): Promise<Session> {
    const { text, values } = sql.insertSessionStatement(s, s.id, s.createdAt);
    return toSession(this.db.sql(text).get(...values) as SessionRow);
  }

  async getSession(id: string): Promise<Session | null> {
    const row = this.db.sql(sql.SELECT_SESSION).get(id) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  async listSessions(f: SessionFilter): Promise<Page<Session>> {
    const { text, values } = sql.listSessionsStatement(f);
    return page((this.db.sql(text).all(...values) as SessionRow[]).map(toSession), f.limit);
  }

  async closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null> {
    return this.db.write(() => {
      const row = this.db.sql(sql.SELECT_SESSION).get(id) as SessionRow | undefined;
      if (!row) return null;
      const close = sql.closeSessionStatement(id, now);
      const closed =
        row.status === 'open' ? (this.db.sql(close.text).get(...close.values) as SessionRow) : row;
      const deletedJobs = this.db.sql(sql.DELETE_SESSION_JOBS).run(id).changes;
      return { session: toSession(closed), deletedJobs };
    });
  }
}

/**
 * A session found again by its scope key (a subject's, a scheduled trigger's): made by the transaction that
 * first needs it (fireTrigger, createScheduleTrigger).
 */
export function insertScopedSession(
  db: SqliteDb,
  s: Omit<NewSession, 'id' | 'createdAt'> & { scopeKey: string },
  id: string,
  createdAt: number,
): void {
  const { text, values } = sql.insertSessionStatement(s, id, createdAt);
  db.sql(text).run(...values);
}
