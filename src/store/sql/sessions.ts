import type { NewSession, SessionFilter } from '../sessions.js';
import type { Statement } from './dialect.js';
import { addCursor, equalities, whereSql } from './query.js';

// The SQL of sessions that both backends run as written here (`?` placeholders, see dialect.ts). The locks
// closeSession takes on PostgreSQL stay with that backend.

export const SELECT_SESSION = 'SELECT * FROM sessions WHERE id = ?';

/** Opens a session, returning its row; with `scopeKey`, one found again by it (fireTrigger, schedules). */
export function insertSessionStatement(
  s: Omit<NewSession, 'id' | 'createdAt'> & { scopeKey?: string },
  id: string,
  createdAt: number,
): Statement {
  return {
    text: `INSERT INTO sessions (id, name, workspace, workspace_kind, owner, defaults, status, created_at, scope_key,
             limits)
           VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?) RETURNING *`,
    values: [
      id,
      s.name,
      s.workspace,
      s.workspaceKind ?? null,
      s.owner,
      JSON.stringify(s.defaults),
      createdAt,
      s.scopeKey ?? null,
      JSON.stringify(s.limits ?? {}),
    ],
  };
}

/** Oldest first, keyset-paginated (one row more than the page, to tell whether another follows). */
export function listSessionsStatement(f: SessionFilter): Statement {
  const { where, values } = equalities([['status', f.status]]);
  addCursor(f.cursor, where, values, 'asc');
  return {
    text: `SELECT * FROM sessions ${whereSql(where)} ORDER BY created_at ASC, id ASC LIMIT ?`,
    values: [...values, f.limit + 1],
  };
}

/** Closes an open session; returns its row when it was open. */
export function closeSessionStatement(id: string, now: number): Statement {
  return {
    text: `UPDATE sessions SET status = 'closed', closed_at = ? WHERE id = ? AND status = 'open' RETURNING *`,
    values: [now, id],
  };
}

/** A closed session's jobs go with it. Values: session id. */
export const DELETE_SESSION_JOBS = 'DELETE FROM cron_jobs WHERE session_id = ?';
