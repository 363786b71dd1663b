import type { Clock } from '../clock.js';
import { mcpServerNames } from '../config/mcp-names.js';
import type { Config } from '../config/schema.js';
import { DomainError } from '../domain/errors.js';
import { checkMcpSelection } from '../domain/mcp-selection.js';
import type { SpendLimits } from '../domain/spend.js';
import type { RunDefaults, Session } from '../domain/types.js';
import { newId } from '../ids.js';
import { checkedRunOptions } from '../models/catalogue.js';
import type { SessionStore } from '../store/store.js';
import { workspaceDir } from '../workspace/dir.js';
import { workspaceKindOf } from '../workspace/git.js';
import type { HiddenPaths } from '../workspace/hidden.js';

// A session is a workspace someone works in: its runs share it, its jobs fire into it. Created by a person;
// closed by a person, which ends its jobs. A schedule trigger's session (scope `schedule:<trigger id>`) is the
// trigger's: it ends with the trigger, never on its own.

export interface SessionsDeps {
  store: SessionStore;
  clock: Clock;
  config: Config;
  /** The scheduler loop, woken when closing a session deleted its jobs. */
  scheduler: { kick(): void };
  /** What no session's workspace may hold (the daemon's one list, see workspace/hidden.ts). */
  hidden: HiddenPaths;
}

/** A session as requested. */
export interface NewSessionRequest {
  /** Default: the session's id. */
  name?: string | undefined;
  /** An absolute path to an existing directory holding none of drydock's own files (invalid_workspace otherwise). */
  workspace: string;
  owner: string;
  /** Checked against the model catalogue (invalid_model). */
  defaults?: RunDefaults | undefined;
  /** The session's spend caps (docs/spend-caps.md; default: none). */
  limits?: SpendLimits | undefined;
}

/** A closed session and how many jobs closing it deleted. */
export interface ClosedSession {
  session: Session;
  deletedJobs: number;
}

const SCHEDULE_SCOPE = 'schedule:';

export class Sessions {
  constructor(private readonly deps: SessionsDeps) {}

  async create(req: NewSessionRequest): Promise<Session> {
    const workspace = await workspaceDir(req.workspace, this.deps.hidden);
    const defaults = checkedRunOptions(this.deps.config, req.defaults, this.deps.clock.now());
    checkMcpSelection(defaults, mcpServerNames(this.deps.config));
    const id = newId('ses');
    return this.deps.store.createSession({
      id,
      name: req.name ?? id,
      workspace,
      workspaceKind: await workspaceKindOf(workspace),
      owner: req.owner,
      defaults,
      limits: req.limits ?? {},
      createdAt: this.deps.clock.now(),
    });
  }

  async get(id: string): Promise<Session> {
    const session = await this.deps.store.getSession(id);
    if (!session) throw new DomainError('not_found', `session ${id} not found`);
    return session;
  }

  /**
   * Marks the session closed and deletes its jobs in one transaction (its runs are left as they are; closing
   * twice deletes nothing more); managed_by_trigger for a schedule trigger's session.
   */
  async close(id: string): Promise<ClosedSession> {
    const { store, clock } = this.deps;
    const scoped = await store.getSession(id);
    if (scoped?.scopeKey?.startsWith(SCHEDULE_SCOPE)) {
      throw new DomainError(
        'managed_by_trigger',
        `session ${scoped.id} belongs to schedule trigger ${scoped.scopeKey.slice(SCHEDULE_SCOPE.length)}: delete the trigger instead`,
      );
    }
    const closed = await store.closeSession(id, clock.now());
    if (!closed) throw new DomainError('not_found', `session ${id} not found`);
    this.deps.scheduler.kick();
    return closed;
  }
}
