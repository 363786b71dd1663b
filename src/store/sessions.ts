import type { Page, Session, WorkspaceKind } from '../domain/types.js';

export interface NewSession {
  id: string;
  name: string;
  workspace: string;
  /** What the workspace is, judged once when the session is made (Session.workspaceKind); null: unknown. */
  workspaceKind?: WorkspaceKind | null;
  owner: string;
  defaults: Session['defaults'];
  /** The session's spend caps (default: none). */
  limits?: Session['limits'] | undefined;
  createdAt: number;
}

export interface SessionFilter {
  status?: Session['status'] | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Sessions: opened, listed, closed (closing deletes their jobs in the same transaction). */
export interface SessionStore {
  createSession(session: NewSession): Promise<Session>;
  getSession(id: string): Promise<Session | null>;
  listSessions(filter: SessionFilter): Promise<Page<Session>>;
  /** Marks the session closed and deletes its jobs, atomically. Null when unknown. */
  closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null>;
}
