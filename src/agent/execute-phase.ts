import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { RunEvents } from '../runs/events.js';
import type { RunOutcome } from '../runs/queue.js';
import type { Store } from '../store/store.js';
import type { ExecuteMode, Plan, Run, Session, ToolApproval } from '../store/types.js';
import { effectiveMode } from './breaker.js';
import { PARKED, type Phase, type ToolResultBlock, type ToolUse } from './phase.js';
import { readOnlyTool } from './plan-phase.js';
import { EXECUTE_DIRECTIVE, executeToolRefused, TOOL_APPROVAL_TIMED_OUT, toolDenied } from './prompt.js';
import { autoAllowed, EXECUTE_TOOLS, runBash, runEdit, runWrite, safeEnv } from './tools/execute-tools.js';
import type { ToolLimits } from './tools/limits.js';
import type { ToolResult } from './tools/types.js';
import { Workspace } from './tools/workspace.js';
import { commitExecution, planTitle, prepareWorktree, StaleBaseError } from './worktree.js';

const READ_ONLY = new Set(['Read', 'Glob', 'Grep']);
const CHANGING = new Set(['Write', 'Edit', 'Bash']);

interface ExecuteDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  events: RunEvents;
  toolLimits: ToolLimits;
}

/**
 * The execute phase of an approved plan: the plan tools plus Write, Edit and Bash, each changing call
 * allowed or parked for a person according to the execution mode. A git workspace runs in its own
 * worktree and ends with a commit on `drydock/<plan id>`; other workspaces change in place.
 */
export class ExecutePhase implements Phase {
  readonly tools = EXECUTE_TOOLS;
  readonly directive = EXECUTE_DIRECTIVE;
  private readonly touched = new Set<string>();

  private constructor(
    private readonly deps: ExecuteDeps,
    private readonly run: Run,
    private readonly plan: Plan,
    readonly workspace: Workspace,
    private readonly mode: ExecuteMode,
    private readonly startedAt: number,
    private readonly signal: AbortSignal,
  ) {}

  /** Settles the mode (through the breaker) and the workspace; a failure here ends the run. */
  static async open(
    deps: ExecuteDeps,
    run: Run,
    session: Session,
    signal: AbortSignal,
  ): Promise<ExecutePhase | RunOutcome> {
    const { store, events, clock, config } = deps;
    const plan = run.executesPlanId ? await store.getPlan(run.executesPlanId) : null;
    if (!plan) return { status: 'failed', error: 'the execute run names no plan' };
    await store.transitionPlan(plan.id, ['approved'], 'executing');

    let mode = run.executeMode;
    if (!mode) {
      const chosen = await effectiveMode(store, config, plan.executeMode, clock.now());
      mode = chosen.mode;
      await store.updateRun(run.id, { executeMode: mode });
      if (chosen.fallback) {
        deps.logger.warn(
          { run_id: run.id, from: plan.executeMode, reason: chosen.fallback },
          'execute mode fell back to manual',
        );
        await events.emit(run.id, 'mode_fallback', {
          from: plan.executeMode,
          to: 'manual',
          reason: chosen.fallback,
        });
      }
    }

    let root = session.workspace;
    if (plan.workspaceCommit) {
      try {
        root = await prepareWorktree(
          session.workspace,
          plan.id,
          plan.workspaceCommit,
          join(config.data_dir, 'worktrees'),
          // A pull request's plan is pinned to the PR head (the clone's HEAD is another branch).
          plan.subject === null,
        );
      } catch (err) {
        const reason =
          err instanceof StaleBaseError ? `stale: ${err.message}` : `worktree: ${(err as Error).message}`;
        await store.transitionPlan(plan.id, ['approved', 'executing'], 'execution_failed', {
          failureReason: reason,
        });
        return { status: 'failed', error: reason };
      }
    }
    const workspace = await Workspace.open(root);
    return new ExecutePhase(deps, run, plan, workspace, mode, run.startedAt ?? clock.now(), signal);
  }

  async call(
    use: ToolUse,
    prior: ToolResultBlock[],
  ): Promise<ToolResult | typeof PARKED | { planned: ToolResult }> {
    if (READ_ONLY.has(use.name)) return readOnlyTool(this.deps, this.run.id, this.workspace, use);
    if (!CHANGING.has(use.name)) {
      await this.deps.events.emit(this.run.id, 'policy_violation', {
        tool: use.name,
        tool_use_id: use.id,
        phase: 'execute',
      });
      return { content: executeToolRefused(use.name), isError: true };
    }
    if (this.needsApproval(use)) {
      const approval = await this.approval(use, prior);
      if (approval === PARKED) return PARKED;
      if (approval.status !== 'allowed') {
        return {
          content:
            approval.status === 'timed_out'
              ? TOOL_APPROVAL_TIMED_OUT
              : toolDenied(approval.decidedBy, approval.message),
          isError: true,
        };
      }
    }
    return this.carryOut(use);
  }

  async parkedResults(use: ToolUse): Promise<ToolResultBlock[] | null> {
    const a = await this.deps.store.findToolApproval(this.run.id, use.id);
    return a ? (a.priorResults as ToolResultBlock[]) : null;
  }

  async endTurn(): Promise<RunOutcome | { remind: string }> {
    return { status: 'completed' };
  }

  async finish(outcome: RunOutcome): Promise<RunOutcome> {
    const { store, events } = this.deps;
    if (outcome.status === 'awaiting_input') return outcome;
    if (outcome.status !== 'completed') {
      await store.transitionPlan(this.plan.id, ['approved', 'executing'], 'execution_failed', {
        failureReason: outcome.error ?? outcome.status,
      });
      return outcome;
    }
    try {
      let commit: string | null = null;
      let diffStat: string | null = null;
      let changed: string[];
      if (this.plan.workspaceCommit) {
        const result = await commitExecution(this.workspace.root, this.plan.workspaceCommit, {
          id: this.plan.id,
          sha256: this.plan.sha256,
          title: planTitle(this.plan.markdown),
        });
        ({ commit, diffStat } = result);
        changed = result.changedFiles;
      } else {
        changed = await this.changedInPlace();
      }
      await store.updateRun(this.run.id, { resultCommit: commit, diffStat, changedFiles: changed });
      await store.transitionPlan(this.plan.id, ['approved', 'executing'], 'executed');
      await events.emit(this.run.id, 'execution_recorded', {
        plan_id: this.plan.id,
        branch: this.plan.workspaceCommit ? `drydock/${this.plan.id}` : null,
        commit,
        diff_stat: diffStat,
        changed_files: changed,
      });
      return outcome;
    } catch (err) {
      const reason = `recording the result failed: ${(err as Error).message}`;
      await store.transitionPlan(this.plan.id, ['approved', 'executing'], 'execution_failed', {
        failureReason: reason,
      });
      return { status: 'failed', error: reason };
    }
  }

  /** manual: every change needs a person; edits: Write/Edit run, Bash needs a person; auto: so do Bash
   *  commands outside the allow-list. */
  private needsApproval(use: ToolUse): boolean {
    if (this.mode === 'manual') return true;
    if (use.name !== 'Bash') return false;
    if (this.mode === 'edits') return true;
    const command = (use.input as { command?: unknown })?.command;
    return !(
      typeof command === 'string' &&
      autoAllowed(command, this.deps.config.execute.bash_allow_list, { sandboxed: false }).allowed
    );
  }

  private async approval(use: ToolUse, prior: ToolResultBlock[]): Promise<ToolApproval | typeof PARKED> {
    const { store, events, clock, config } = this.deps;
    const existing = await store.findToolApproval(this.run.id, use.id);
    if (existing) return existing.status === 'pending' ? PARKED : existing;
    const now = clock.now();
    const a = await store.createToolApproval({
      id: newId('tap'),
      runId: this.run.id,
      sessionId: this.run.sessionId,
      planId: this.plan.id,
      toolUseId: use.id,
      tool: use.name,
      input: use.input,
      priorResults: prior,
      createdAt: now,
      expiresAt: now + config.execute.tool_approval_timeout_ms,
    });
    await events.emit(this.run.id, 'tool_approval_request', {
      tool_approval_id: a.id,
      tool: use.name,
      tool_use_id: use.id,
      input: use.input,
      mode: this.mode,
      expires_at: new Date(a.expiresAt).toISOString(),
    });
    return PARKED;
  }

  private async carryOut(use: ToolUse): Promise<ToolResult> {
    const { events, config } = this.deps;
    await events.emit(this.run.id, 'tool_use', { tool: use.name, tool_use_id: use.id, input: use.input });
    let r: ToolResult & { changedPath?: string };
    if (use.name === 'Write')
      r = await runWrite(this.workspace, use.input, { maxWriteBytes: config.execute.max_write_bytes });
    else if (use.name === 'Edit')
      r = await runEdit(this.workspace, use.input, { maxWriteBytes: config.execute.max_write_bytes });
    else {
      r = await runBash(
        use.input,
        {
          cwd: this.workspace.root,
          timeoutMs: config.execute.bash_timeout_ms,
          maxTimeoutMs: 600_000,
          maxOutputChars: config.execute.bash_max_output_chars,
          // Commands see none of the daemon's secrets.
          env: safeEnv(process.env, { HOME: this.workspace.root }),
        },
        this.signal,
      );
    }
    if (r.changedPath) this.touched.add(r.changedPath);
    await events.emit(this.run.id, 'tool_result', {
      tool: use.name,
      tool_use_id: use.id,
      is_error: r.isError,
      truncated: r.truncated ?? false,
      chars: r.content.length,
    });
    return r;
  }

  /** Without git: the files Write and Edit touched, plus files modified since the execution began. */
  private async changedInPlace(): Promise<string[]> {
    const found = new Set(this.touched);
    const root = this.workspace.root;
    let budget = 20_000;
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (--budget < 0) return;
        if (entry.name === '.git' || entry.name === 'node_modules') continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile() && (await stat(path)).mtimeMs >= this.startedAt) {
          found.add(relative(root, path).split(sep).join('/'));
        }
      }
    };
    await walk(root);
    return [...found].sort();
  }
}
