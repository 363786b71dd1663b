import type { Page, Session } from '../../domain/types.js';
import { page } from '../paging.js';
import { type SessionRow, toSession } from '../rows.js';
import type { NewSession, SessionFilter, SessionStore } from '../sessions.js';
import * as sql from '../sql/sessions.js';
import type { PgDb, Queries } from './db.js';

/** Sessions: opened, listed, closed (closing deletes their jobs in the same transaction). */
export class PgSessions implements SessionStore {
  constructor(private readonly db: PgDb) {}

  async createSession(s: NewSession): Promise<Session> {
    const { text, values } = sql.insertSessionStatement(s, s.id, s.createdAt);
    return toSession((await this.db.row<SessionRow>(text, values))!);
  }

  async getSession(id: string): Promise<Session | null> {
    const row = await this.db.row<SessionRow>(sql.SELECT_SESSION, [id]);
    return row ? toSession(row) : null;
  }

  async listSessions(f: SessionFilter): Promise<Page<Session>> {
    const { text, values } = sql.listSessionsStatement(f);
    return page((await this.db.rows<SessionRow>(text, values)).map(toSession), f.limit);
  }

  async closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null> {
    return this.db.tx(async (q) => {
      // The session's jobs are locked before the session, in the order the scheduler's advanceJobs takes
      // them (a job, then its session): taken the other way round, the two could wait on each other.
      await q.rows('SELECT id FROM cron_jobs WHERE session_id = $1 ORDER BY id FOR UPDATE', [id]);
      const row = await q.row<SessionRow>('SELECT * FROM sessions WHERE id = $1 FOR NO KEY UPDATE', [id]);
      if (!row) return null;
      const close = sql.closeSessionStatement(id, now);
      const closed = row.status === 'open' ? await q.row<SessionRow>(close.text, close.values) : row;
      const deletedJobs = await q.exec(sql.DELETE_SESSION_JOBS, [id]);
      return { session: toSession(closed!), deletedJobs };
    });
  }
}

/**
 * A session found again by its scope key (a subject's, a scheduled trigger's): made by the transaction that
 * first needs it (fireTrigger, createScheduleTrigger).
 */
export async function insertScopedSession(
  q: Queries,
  s: Omit<NewSession, 'id' | 'createdAt'> & { scopeKey: string },
  id: string,
  createdAt: number,
): Promise<void> {
  const { text, values } = sql.insertSessionStatement(s, id, createdAt);
  await q.exec(text, values);
}
