import type { Page, Session } from '../../domain/types.js';
import { page } from '../paging.js';
import { type SessionRow, toSession } from '../rows.js';
import type { NewSession, SessionFilter, SessionStore } from '../sessions.js';
import { addCursor, equalities, whereSql } from '../sql/query.js';
import type { SqliteDb } from './db.js';

export class SqliteSessions implements SessionStore {
  constructor(private readonly db: SqliteDb) {}

  async createSession(s: NewSession): Promise<Session> {
    this.db
      .sql(
        `INSERT INTO sessions (id, name, workspace, workspace_kind, owner, defaults, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'open', ?)`,
      )
      .run(
        s.id,
        s.name,
        s.workspace,
        s.workspaceKind ?? null,
        s.owner,
        JSON.stringify(s.defaults),
        s.createdAt,
      );
    return (await this.getSession(s.id))!;
  }

  async getSession(id: string): Promise<Session | null> {
    const row = this.db.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  async listSessions(f: SessionFilter): Promise<Page<Session>> {
    const { where, values: args } = equalities([['status', f.status]]);
    addCursor(f.cursor, where, args, 'asc');
    const rows = this.db
      .sql(`SELECT * FROM sessions ${whereSql(where)} ORDER BY created_at ASC, id ASC LIMIT ${f.limit + 1}`)
      .all(...args) as SessionRow[];
    return page(rows.map(toSession), f.limit);
  }

  async closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null> {
    return this.db.write(() => {
      const row = this.db.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
      if (!row) return null;
      if (row.status === 'open') {
        this.db.sql(`UPDATE sessions SET status = 'closed', closed_at = ? WHERE id = ?`).run(now, id);
      }
      const deleted = this.db.sql('DELETE FROM cron_jobs WHERE session_id = ?').run(id).changes;
      const session = toSession(this.db.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow);
      return { session, deletedJobs: deleted };
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
  db.sql(
    `INSERT INTO sessions (id, name, workspace, workspace_kind, owner, defaults, status, created_at, scope_key)
     VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
  ).run(
    id,
    s.name,
    s.workspace,
    s.workspaceKind ?? null,
    s.owner,
    JSON.stringify(s.defaults),
    createdAt,
    s.scopeKey,
  );
}
