import type { Page, Session } from '../../domain/types.js';
import { page } from '../paging.js';
import { type SessionRow, toSession } from '../rows.js';
import type { NewSession, SessionFilter, SessionStore } from '../sessions.js';
import { addCursor, equalities, json, Params, type PgDb, type Queries, whereSql } from './db.js';

/** Sessions: opened, listed, closed (closing deletes their jobs in the same transaction). */
export class PgSessions implements SessionStore {
  constructor(private readonly db: PgDb) {}

  async createSession(s: NewSession): Promise<Session> {
    const row = await this.db.row<SessionRow>(
      `INSERT INTO sessions (id, name, workspace, workspace_kind, owner, defaults, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'open', $7) RETURNING *`,
      [s.id, s.name, s.workspace, s.workspaceKind ?? null, s.owner, json(s.defaults), s.createdAt],
    );
    return toSession(row!);
  }

  async getSession(id: string): Promise<Session | null> {
    const row = await this.db.row<SessionRow>('SELECT * FROM sessions WHERE id = $1', [id]);
    return row ? toSession(row) : null;
  }

  async listSessions(f: SessionFilter): Promise<Page<Session>> {
    const p = new Params();
    const where = equalities([['status', f.status]], p);
    addCursor(f.cursor, where, p, 'asc');
    const rows = await this.db.rows<SessionRow>(
      `SELECT * FROM sessions ${whereSql(where)} ORDER BY created_at ASC, id ASC LIMIT ${p.add(f.limit + 1)}`,
      p.values,
    );
    return page(rows.map(toSession), f.limit);
  }

  async closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null> {
    return this.db.tx(async (q) => {
      // The session's jobs are locked before the session, in the order the scheduler's advanceJobs takes
      // them (a job, then its session): taken the other way round, the two could wait on each other.
      await q.rows('SELECT id FROM cron_jobs WHERE session_id = $1 ORDER BY id FOR UPDATE', [id]);
      const row = await q.row<SessionRow>('SELECT * FROM sessions WHERE id = $1 FOR NO KEY UPDATE', [id]);
      if (!row) return null;
      const closed =
        row.status === 'open'
          ? await q.row<SessionRow>(
              `UPDATE sessions SET status = 'closed', closed_at = $2 WHERE id = $1 RETURNING *`,
              [id, now],
            )
          : row;
      const deletedJobs = await q.exec('DELETE FROM cron_jobs WHERE session_id = $1', [id]);
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
  await q.exec(
    `INSERT INTO sessions (id, name, workspace, workspace_kind, owner, defaults, status, created_at, scope_key)
     VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, $8)`,
    [id, s.name, s.workspace, s.workspaceKind ?? null, s.owner, json(s.defaults), createdAt, s.scopeKey],
  );
}
