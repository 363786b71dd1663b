import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { executionBase } from '../domain/footprint.js';
import type { ConversationFrame } from '../domain/frame.js';
import { isMcpTool, mcpToolOf } from '../domain/mcp-names.js';
import { planTitle } from '../domain/plan-title.js';
import {
  type ConversationMessage,
  type ExecuteMode,
  type Plan,
  type Run,
  type Session,
  type ToolApproval,
  TREE_REFUSED,
} from '../domain/types.js';
import { pullRequestOf } from '../github/target.js';
import { newId } from '../ids.js';
import type { RunOutcome } from '../runs/queue.js';
import { StoreUnavailableError } from '../store/store.js';
import { type CarriedBack, carryBack, copyWorkspace } from '../workspace/copy.js';
import { inGitRepository } from '../workspace/git.js';
import { isWithin } from '../workspace/hidden.js';
import { unconfined } from '../workspace/isolation.js';
import { scratchPath, workRoot, worktreePath, worktreesDir } from '../workspace/paths.js';
import { checkoutWants } from '../workspace/repo-cache.js';
import { describeSweep, sweepTree } from '../workspace/sweep.js';
import { privateTempDir } from '../workspace/temp.js';
import {
  commitExecution,
  type ExecutionTree,
  prepareWorktree,
  removeTree,
  StaleBaseError,
  TreeRefusedError,
} from '../workspace/worktree.js';
import { effectiveMode } from './breaker.js';
import type { Waits } from './cache-ttl.js';
import { constantFrame } from './frame.js';
import { executeMcpGate } from './mcp-calls.js';
import { executeMemorySource, readMemory, withMemory } from './memory-source.js';
import { PARKED, type Phase, type PhaseDeps, type ToolResultBlock, type ToolUse } from './phase.js';
import { processIdentity } from './processes.js';
import {
  BASE_SYSTEM_PROMPT,
  callInterrupted,
  EXECUTE_DIRECTIVE,
  executeBrief,
  executeKickoff,
  executeToolRefused,
  sandboxUnavailable,
  TOOL_APPROVAL_TIMED_OUT,
  toolDenied,
} from './prompt.js';
import type { Confinement, SandboxStatus } from './sandbox.js';
import {
  isReadOnly,
  parkedCall,
  readOnlyTool,
  refuseCall,
  refuseRepeatedId,
  reportedCall,
} from './tool-calls.js';
import {
  autoAllowed,
  BACKGROUND_REFUSED,
  EXECUTE_TOOLS,
  linksOutside,
  runBash,
  runEdit,
  runWrite,
  safeEnv,
} from './tools/execute-tools.js';
import type { ToolResult } from './tools/types.js';
import { Workspace } from './tools/workspace.js';

const CHANGING = new Set(['Write', 'Edit', 'Bash']);

/** sha256 of a tool input as canonical JSON (keys sorted), which an approval binds. */
export function inputDigest(input: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(input)) ?? 'null')
    .digest('hex');
}

/** Where the execution works: a worktree of the repository, or the workspace itself when it is no repository. */
interface Place {
  workspace: Workspace;
  tree: ExecutionTree | null;
  /** A plain workspace's copy, which the execution works on (copy.ts), and the workspace itself. */
  copy: { dir: string; workspace: string } | null;
  confinement: Confinement;
}

/**
 * The execute phase of an approved plan: the plan tools plus Write, Edit and Bash, each changing call
 * allowed or parked for a person according to the execution mode. A git workspace runs in its own
 * worktree and ends with a commit on `drydock/<plan id>`; a plain workspace runs on a copy whose changes are
 * carried back when it succeeds (src/workspace/copy.ts). Commands run in
 * the sandbox (sandbox.ts). Every changing call is journaled before it starts, so a retried turn after a
 * crash never runs it twice.
 */
export class ExecutePhase implements Phase {
  readonly constantFrame = constantFrame([BASE_SYSTEM_PROMPT, EXECUTE_DIRECTIVE], EXECUTE_TOOLS);

  /** Bytes of the execution's directory before its first command, and how much it grew since. */
  private baseBytes: number | null = null;
  private grown = 0;

  private constructor(
    private readonly deps: PhaseDeps,
    private readonly run: Run,
    private readonly plan: Plan,
    private readonly place: Place,
    private readonly sandbox: SandboxStatus,
    /** HOME of unconfined commands (sandbox off): an empty directory of the run's own, never the workspace. */
    private readonly home: string | null,
    private readonly mode: ExecuteMode,
    private readonly startedAt: number,
    private readonly signal: AbortSignal,
    private readonly session: Session,
  ) {}

  get workspace(): Workspace {
    return this.place.workspace;
  }

  /** manual and edits park any turn's change or command for a person; auto only now and then (cache-ttl.ts). */
  get waits(): Waits {
    return this.mode === 'auto' ? 'seldom' : 'any_turn';
  }

  /** The constants and the project memory (memory.ts), as of the commit (or copy) the execution starts from. */
  async frame(): Promise<ConversationFrame> {
    const source = await executeMemorySource(this.deps, this.plan, this.session, this.place);
    return withMemory(this.constantFrame, await readMemory(this.deps, this.run, source));
  }

  /** Settles the mode (through the breaker) and the workspace; a failure here ends the run. */
  static async open(
    deps: PhaseDeps,
    run: Run,
    session: Session,
    signal: AbortSignal,
    /** The execution begun before is started over: its worktree is made again (see `prepareWorktree`). */
    startOver = false,
  ): Promise<ExecutePhase | RunOutcome> {
    const { store, events, clock, config } = deps;
    const plan = run.executesPlanId ? await store.getPlan(run.executesPlanId) : null;
    if (!plan) return { status: 'failed', error: 'the execute run names no plan' };
    // `executing` already: a run resumed after a question or a restart.
    if (!(await deps.lifecycle.startExecution(plan.id))) return ExecutePhase.settled(deps, plan.id);

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

    const place = await ExecutePhase.place(deps, plan, session, startOver);
    if ('error' in place) {
      await deps.lifecycle.failExecution(plan.id, place.error);
      return { status: 'failed', error: place.error };
    }
    const sandbox = await deps.sandbox.status();
    const home = sandbox.state === 'off' ? privateTempDir('drydock-home-') : null;
    return new ExecutePhase(
      deps,
      run,
      plan,
      place,
      sandbox,
      home,
      mode,
      run.startedAt ?? clock.now(),
      signal,
      session,
    );
  }

  /**
   * The plan of an execute run is past `executing` when the run opens. Most often it was never approved (a
   * plan that moved on meanwhile): nothing runs. But this run may have got as far as recording its own
   * outcome on the plan, then died (SIGKILL, a lost replica) before the run itself ended: the store's two
   * writes are separate, so a restart or another replica finds the plan `executed` (or
   * `execution_failed`) and the run still to finish. It ends as the plan says, and nothing runs twice.
   */
  private static async settled(deps: PhaseDeps, planId: string): Promise<RunOutcome> {
    const plan = await deps.store.getPlan(planId);
    if (plan?.status === 'executed') return { status: 'completed' };
    if (plan?.status === 'execution_failed' && plan.failureReason) {
      return { status: 'failed', error: plan.failureReason };
    }
    return {
      status: 'failed',
      error: `plan ${planId} is ${plan?.status ?? 'gone'}, not approved: nothing was executed`,
    };
  }

  /**
   * A git workspace executes in a worktree at the plan's commit, in the same subdirectory as the session;
   * its commands may write there only, and read the repository's git directory. A repository without a
   * commit has nothing to make a worktree of: it is refused rather than changed in place. Any other
   * directory is the workspace itself.
   */
  private static async place(
    deps: PhaseDeps,
    plan: Plan,
    session: Session,
    startOver: boolean,
  ): Promise<Place | { error: string }> {
    if (!plan.workspaceCommit) {
      // The kind was fixed when the session was made; a session from before that is judged now.
      const git = session.workspaceKind === null ? await inGitRepository(session.workspace) : false;
      if (session.workspaceKind === 'git' || git) {
        return {
          error:
            'the workspace is a git repository without a commit yet: drydock executes plans in a worktree of a commit and never in your checkout; commit first, then ask for a new plan',
        };
      }
      return ExecutePhase.copied(deps, plan, session, startOver);
    }
    const fetched = await ExecutePhase.fetchCloned(deps, plan, startOver);
    if (fetched) return fetched;
    const base = executionBase(plan) ?? plan.workspaceCommit;
    const sandboxed = (await deps.sandbox.status()).state === 'bwrap';
    let tree: ExecutionTree;
    try {
      tree = await prepareWorktree(
        session.workspace,
        plan.id,
        // The head an approval found moved on without touching the plan's footprint, else the plan's commit.
        base,
        worktreesDir(workRoot(deps.config)),
        // A pull request's plan is pinned to the PR head (the clone's HEAD is another branch).
        plan.subject === null,
        startOver,
        // A root daemon's commands run as another uid (sandbox.ts): the new worktree is made theirs.
        sandboxed ? (top) => deps.sandbox.handOver(top) : undefined,
      );
    } catch (err) {
      return {
        error:
          err instanceof StaleBaseError ? `stale: ${err.message}` : `worktree: ${(err as Error).message}`,
      };
    }
    const workspace = await Workspace.open(tree.root, deps.hidden);
    // The worktree's `.git` file lies above a subdirectory session's root: mounted read-only so that git
    // commands still find the repository from there.
    const readOnly = [tree.commonDir, ...(tree.prefix === '' ? [] : [join(tree.top, '.git')])];
    const root = workspace.root;
    return {
      workspace,
      tree,
      copy: null,
      confinement: { cwd: root, writable: [root], readOnly, network: await deps.egress.open(plan.network) },
    };
  }

  /**
   * A pull request's plan on a repository cloned on demand (workspace/repo-cache.ts): what its worktree is made
   * of is fetched into the cache first, when the worktree is still to be made. The repository's configured
   * clone, or a session's workspace, is used as it is.
   */
  private static async fetchCloned(
    deps: PhaseDeps,
    plan: Plan,
    startOver: boolean,
  ): Promise<{ error: string } | null> {
    const cache = deps.repoCache;
    if (!cache || plan.subject === null || !plan.workspaceCommit) return null;
    if (!startOver && existsSync(worktreePath(workRoot(deps.config), plan.id))) return null;
    const pr = await pullRequestOf(deps.store, await deps.store.getRun(plan.runId));
    if (!pr || !cache.holds(pr.repository, pr.clone)) return null;
    try {
      await cache.prepare(pr.repository, [...checkoutWants(pr), { commit: plan.workspaceCommit }]);
      return null;
    } catch (err) {
      return { error: `worktree: ${(err as Error).message}` };
    }
  }

  /**
   * A plain workspace executes on a copy in the worktrees directory, made when the execution first opens
   * (again when it starts over); the workspace itself is never mounted in the sandbox.
   */
  private static async copied(
    deps: PhaseDeps,
    plan: Plan,
    session: Session,
    startOver: boolean,
  ): Promise<Place | { error: string }> {
    const source = await Workspace.open(session.workspace, deps.hidden);
    const dir = worktreePath(workRoot(deps.config), plan.id);
    try {
      if (startOver) await removeTree(dir);
      if (!existsSync(dir)) {
        await mkdir(worktreesDir(workRoot(deps.config)), { recursive: true, mode: 0o700 });
        await copyWorkspace(source.root, dir, hiddenIn(deps, source.root));
        await markCopied(deps, plan.id);
        if ((await deps.sandbox.status()).state === 'bwrap') await deps.sandbox.handOver(dir);
      }
    } catch (err) {
      return { error: `copying the workspace failed: ${(err as Error).message}` };
    }
    const workspace = await Workspace.open(dir, deps.hidden);
    const confinement = {
      cwd: dir,
      writable: [dir],
      readOnly: [],
      network: await deps.egress.open(plan.network),
    };
    return { workspace, tree: null, copy: { dir, workspace: source.root }, confinement };
  }

  /**
   * The execute phase is a conversation of its own (a conversation never changes its system prompt or its
   * tools): it opens with the approval, the approved plan verbatim with its sha256, the original task and
   * the files the plan phase read, all taken from the plan's conversation.
   */
  async opening(): Promise<string> {
    const [planned, decisions] = await Promise.all([
      this.deps.store.loadConversation(this.plan.conversationId),
      this.deps.store.listDecisions(this.plan.id),
    ]);
    return executeBrief({
      // Who approved, in the order they did (each once): the decisions the plan service recorded.
      kickoff: executeKickoff([
        ...new Set(decisions.filter((d) => d.kind === 'approve').map((d) => d.identity)),
      ]),
      plan: this.plan.markdown,
      sha256: this.plan.sha256,
      task: taskOf(planned),
      filesRead: filesRead(planned),
      mcpCalls: mcpCallsMade(planned),
    });
  }

  async call(
    use: ToolUse,
    prior: ToolResultBlock[],
  ): Promise<ToolResult | typeof PARKED | { planned: ToolResult }> {
    if (isReadOnly(use)) return readOnlyTool(this.deps, this.run.id, this.workspace, use, this.signal);
    if (isMcpTool(use.name)) {
      // A tool call like Bash: the mode and the configuration decide whether a person is asked (mcp-calls.ts).
      const gate = executeMcpGate(this.deps, use, this.mode);
      if (gate.kind === 'refused') {
        return refuseCall(this.deps.events, this.run, use, executeToolRefused(use.name));
      }
      if (gate.kind === 'gone') return gate.result;
      return this.approvedCall(use, prior, gate.why);
    }
    if (!CHANGING.has(use.name)) {
      return refuseCall(this.deps.events, this.run, use, executeToolRefused(use.name));
    }
    if (use.name === 'Bash' && this.sandbox.state === 'unavailable') {
      // Fail closed: no person is asked to allow a command that would run unconfined.
      return { content: sandboxUnavailable(this.sandbox.detail), isError: true };
    }
    if (use.name === 'Bash' && (use.input as { run_in_background?: unknown })?.run_in_background === true) {
      // Refused whatever the mode: no person is asked to allow what would not run anyway.
      return { content: BACKGROUND_REFUSED, isError: true };
    }
    return this.approvedCall(use, prior, await this.needsApproval(use));
  }

  /** Runs the call once a person allowed it (`why`: what they are asked for), or at once when `why` is null. */
  private async approvedCall(
    use: ToolUse,
    prior: ToolResultBlock[],
    why: string | null,
  ): Promise<ToolResult | typeof PARKED> {
    if (why !== null) {
      const approval = await this.approval(use, prior, why);
      if (approval === PARKED) return PARKED;
      if ('content' in approval) return approval;
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

  async endedBefore(): Promise<RunOutcome | null> {
    // The result recorded before a death is found when the phase opens (see `settled`).
    return null;
  }

  async parkedResults(use: ToolUse): Promise<ToolResultBlock[] | null> {
    const a = await this.deps.store.findToolApproval(this.run.id, use.id);
    return a ? (a.priorResults as ToolResultBlock[]) : null;
  }

  async endTurn(): Promise<RunOutcome | { remind: string }> {
    return { status: 'completed' };
  }

  async finish(outcome: RunOutcome): Promise<RunOutcome> {
    const { store, events, lifecycle } = this.deps;
    // Nothing on disk is touched by a process that lost the run (its paths are the new holder's now).
    await store.confirmHold(this.run.id);
    // Made again when a parked run resumes.
    if (this.home) await rm(this.home, { recursive: true, force: true });
    if (outcome.status === 'awaiting_input') return outcome;
    if (outcome.status !== 'completed') {
      await lifecycle.failExecution(this.plan.id, outcome.error ?? outcome.status);
      return outcome;
    }
    const over = this.overGrowth();
    if (over) {
      await lifecycle.failExecution(this.plan.id, over);
      return { status: 'failed', error: over };
    }
    try {
      let commit: string | null = null;
      let diffStat: string | null = null;
      let changed: string[];
      let notCarried: CarriedBack['skipped'] = [];
      const tree = this.place.tree;
      const base = executionBase(this.plan);
      if (tree && base) {
        const result = await commitExecution(
          tree,
          base,
          { id: this.plan.id, sha256: this.plan.sha256, title: planTitle(this.plan.markdown) },
          this.sandbox.state === 'bwrap' ? this.deps.sandbox : unconfined,
          scratchPath(workRoot(this.deps.config), this.plan.id),
          // The branch moves only while this process still holds the run: one paused past its lease (another
          // carried the plan out meanwhile) must not move it over that execution's commit.
          () => store.confirmHold(this.run.id),
        );
        ({ commit, diffStat } = result);
        changed = result.changedFiles;
      } else {
        ({ changed, skipped: notCarried } = await this.carryBack());
      }
      await store.updateRun(this.run.id, { resultCommit: commit, diffStat, changedFiles: changed });
      await lifecycle.finishExecution(this.plan.id);
      await events.emit(this.run.id, 'execution_recorded', {
        plan_id: this.plan.id,
        branch: this.plan.workspaceCommit ? `drydock/${this.plan.id}` : null,
        commit,
        diff_stat: diffStat,
        changed_files: changed,
        ...(notCarried.length > 0 ? { not_carried_back: notCarried.slice(0, 100) } : {}),
      });
      return outcome;
    } catch (err) {
      // The database is down: nothing is decided about the plan; the run is taken over and starts over.
      if (err instanceof StoreUnavailableError) throw err;
      const reason =
        err instanceof TreeRefusedError
          ? `${TREE_REFUSED}: ${err.message}`
          : `recording the result failed: ${(err as Error).message}`;
      await lifecycle.failExecution(this.plan.id, reason);
      return { status: 'failed', error: reason };
    }
  }

  /**
   * manual: every change needs a person; edits: Write/Edit run, Bash needs a person; auto: so do Bash
   * commands the allow-list does not cover (argv rules in allow-list.ts, repository-defined code only inside
   * the sandbox, no argument leading out of the workspace through a symbolic link). Returns why a person is
   * asked, or null when the call runs on its own.
   */
  private async needsApproval(use: ToolUse): Promise<string | null> {
    if (this.mode === 'manual') return 'manual mode: every change needs a person';
    if (use.name !== 'Bash') return null;
    if (this.mode === 'edits') return 'edits mode: every command needs a person';
    const command = (use.input as { command?: unknown })?.command;
    if (typeof command !== 'string') return 'the command is not a string';
    const verdict = autoAllowed(command, this.deps.config.execute.bash_allow_list, {
      sandboxed: this.sandbox.state === 'bwrap',
    });
    if (!verdict.allowed) return verdict.reason;
    return linksOutside(verdict.argv, this.place.confinement.cwd, this.workspace.root);
  }

  /**
   * The person's decision on this exact call. An approval binds the run, the tool_use id and the sha256 of
   * the input: a stored approval for the same id with another input is never applied (the id was reused).
   */
  private async approval(
    use: ToolUse,
    prior: ToolResultBlock[],
    why: string,
  ): Promise<ToolApproval | ToolResult | typeof PARKED> {
    const { store, events, clock, config } = this.deps;
    const digest = inputDigest(use.input);
    const existing = await store.findToolApproval(this.run.id, use.id);
    if (existing) {
      if (existing.inputSha256 !== digest) return refuseRepeatedId(events, this.run, use);
      return existing.status === 'pending' ? PARKED : existing;
    }
    const a = await store.createToolApproval({
      id: newId('tap'),
      ...parkedCall(this.run, use, prior, clock.now(), config.execute.tool_approval_timeout_ms),
      planId: this.plan.id,
      tool: use.name,
      input: use.input,
      inputSha256: digest,
    });
    await events.emit(this.run.id, 'tool_approval_request', {
      tool_approval_id: a.id,
      tool: use.name,
      tool_use_id: use.id,
      input: use.input,
      mode: this.mode,
      reason: why,
      sandbox: this.sandbox.state,
      expires_at: new Date(a.expiresAt).toISOString(),
      ...mcpRef(use.name),
    });
    return PARKED;
  }

  /**
   * Runs a changing call at most once: it is journaled before it starts and completed with its result. A
   * call found journaled already was started by an earlier attempt of this run: its stored result is
   * returned if it finished, and an "interrupted, not re-run" result if the daemon died while it ran.
   */
  private async carryOut(use: ToolUse): Promise<ToolResult> {
    const { store, events, clock } = this.deps;
    const runId = this.run.id;
    const digest = inputDigest(use.input);
    const journal = await store.startToolCall({
      runId,
      toolUseId: use.id,
      tool: use.name,
      inputSha256: digest,
      startedAt: clock.now(),
    });
    if (!journal.started) {
      const { call } = journal;
      if (call.inputSha256 !== digest || call.tool !== use.name)
        return refuseRepeatedId(events, this.run, use);
      if (call.result) return call.result;
      const interrupted = { content: callInterrupted(use.name), isError: true };
      await store.finishToolCall(runId, use.id, interrupted, clock.now());
      await events.emit(runId, 'tool_interrupted', { tool: use.name, tool_use_id: use.id });
      return interrupted;
    }
    return reportedCall(events, runId, use, async () => {
      const r = await this.perform(use);
      await store.finishToolCall(runId, use.id, { content: r.content, isError: r.isError }, clock.now());
      return r;
    });
  }

  private async perform(use: ToolUse): Promise<ToolResult & { changedPath?: string }> {
    const { config, logger } = this.deps;
    if (isMcpTool(use.name)) return this.deps.mcp.call(use.name, use.input);
    const limits = { maxWriteBytes: config.execute.max_write_bytes };
    if (use.name === 'Write' || use.name === 'Edit') {
      const r = await (use.name === 'Write' ? runWrite : runEdit)(this.workspace, use.input, limits);
      if (r.changedPath && this.sandbox.state === 'bwrap') {
        await this.deps.sandbox.handOverFile(this.workspace.root, join(this.workspace.root, r.changedPath));
      }
      return r;
    }
    this.baseBytes ??= await this.treeBytes();
    const result = await this.command(use);
    // Before the host reads the tree again: no set-ID bit, FIFO, socket or device node stays in it.
    const notes: string[] = [];
    let bytes = 0;
    for (const dir of this.place.confinement.writable) {
      const sweep = await sweepTree(dir);
      bytes += sweep.bytes;
      const note = describeSweep(sweep);
      if (note) notes.push(note);
    }
    if (notes.length > 0) {
      logger.warn({ run_id: this.run.id, sweep: notes }, 'a command left set-ID bits or special files');
    }
    this.grown = bytes - this.baseBytes;
    const over = this.overGrowth();
    if (over) notes.push(`${over}: remove what the plan does not need, or the execution fails when it ends`);
    if (notes.length === 0) return result;
    return {
      ...result,
      content: `${result.content}\n\n${notes.join('\n')}`,
      isError: result.isError || !!over,
    };
  }

  /** The bytes of the execution's directory before its first command (the worktree limit counts growth). */
  private async treeBytes(): Promise<number> {
    let bytes = 0;
    for (const dir of this.place.confinement.writable) bytes += (await sweepTree(dir)).bytes;
    return bytes;
  }

  /** Why the worktree is past `execute.limits.worktree_bytes`, or null. */
  private overGrowth(): string | null {
    const limit = this.deps.config.execute.limits.worktree_bytes;
    if (this.grown <= limit) return null;
    return `the execution's directory grew by ${this.grown} bytes, past execute.limits.worktree_bytes (${limit})`;
  }

  private command(use: ToolUse): Promise<ToolResult> {
    const { config, store, logger } = this.deps;
    const confined = this.sandbox.state === 'bwrap';
    const { confinement } = this.place;
    return runBash(
      use.input,
      {
        cwd: confinement.cwd,
        timeoutMs: config.execute.bash_timeout_ms,
        maxTimeoutMs: 600_000,
        maxOutputChars: config.execute.bash_max_output_chars,
        // Commands see none of the daemon's secrets; HOME is never the workspace (git would read its
        // .gitconfig) and, in the sandbox, is a directory on its private /tmp.
        env: safeEnv(process.env, {
          ...(confined ? {} : { HOME: this.home ?? tmpdir() }),
          // A session on a subdirectory sees only it: the worktree's `.git` file above is on the sandbox's own
          // root, another filesystem, where git's search would stop ("Stopping at filesystem boundary").
          ...(this.place.tree?.prefix ? { GIT_DISCOVERY_ACROSS_FILESYSTEM: '1' } : {}),
        }),
        ...(confined ? { wrap: (command: string) => this.deps.sandbox.wrap(confinement, command) } : {}),
        onSpawn: (group) => {
          store
            .recordToolCallProcess(this.run.id, use.id, group, processIdentity(group))
            .catch((err) => logger.warn({ err, run_id: this.run.id }, 'could not record a command'));
        },
      },
      this.signal,
    );
  }

  /** A plain workspace's changes, from its copy into the workspace (copy.ts). */
  private async carryBack(): Promise<CarriedBack> {
    const copy = this.place.copy;
    if (!copy) return { changed: [], skipped: [] };
    // Files go back into the workspace only while this process still holds the run (see finish).
    await this.deps.store.confirmHold(this.run.id);
    const since = await copiedAt(this.deps, this.plan.id);
    const result = await carryBack(copy.dir, copy.workspace, since, hiddenIn(this.deps, copy.workspace));
    if (result.skipped.length > 0) {
      this.deps.logger.warn(
        { run_id: this.run.id, skipped: result.skipped.slice(0, 20) },
        'some changes of the execution were not carried back into the workspace',
      );
    }
    return result;
  }
}

/** The server and tool of an MCP call, for its approval's event; nothing for a built-in tool. */
function mcpRef(name: string): { mcp?: { server: string; tool: string } } {
  const ref = mcpToolOf(name);
  return ref ? { mcp: ref } : {};
}

/** The first user message's text of a plan conversation: the task as it was given. */
function taskOf(messages: ConversationMessage[]): string {
  const first = messages.find((m) => m.role === 'user');
  const texts = (first?.content ?? []).flatMap((b) => {
    const block = b as { type?: unknown; text?: unknown };
    return block.type === 'text' && typeof block.text === 'string' ? [block.text] : [];
  });
  return texts.join('\n\n');
}

/** The files the plan phase read (Read calls), in the order first read. */
function filesRead(messages: ConversationMessage[]): string[] {
  const files = new Set<string>();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const b of m.content) {
      const block = b as { type?: unknown; name?: unknown; input?: { file_path?: unknown } };
      if (block.type === 'tool_use' && block.name === 'Read' && typeof block.input?.file_path === 'string') {
        files.add(block.input.file_path);
      }
    }
  }
  return [...files];
}

/** The MCP calls the plan phase made, in the order first made: `server tool {input}`, the input cut at 200. */
function mcpCallsMade(messages: ConversationMessage[]): string[] {
  const made = new Set<string>();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const b of m.content) {
      const block = b as { type?: unknown; name?: unknown; input?: unknown };
      const ref = block.type === 'tool_use' ? mcpToolOf(block.name) : null;
      if (!ref) continue;
      const input = JSON.stringify(block.input ?? {}) ?? 'null';
      made.add(`${ref.server} ${ref.tool} ${input.length > 200 ? `${input.slice(0, 199)}…` : input}`);
    }
  }
  return [...made];
}

/** What a copy of `root` leaves out, and carrying back never touches: the daemon's hidden paths inside it. */
function hiddenIn(deps: PhaseDeps, root: string): (abs: string) => boolean {
  const below = deps.hidden.below(root);
  return (abs) => below.some((h) => isWithin(h.real, abs));
}

/**
 * When a plain workspace's copy was made, on the host's clock (file times are): what changed after it is the
 * execution's. Kept beside the copy, so that an execution resumed after a restart knows it too.
 */
async function markCopied(deps: PhaseDeps, planId: string): Promise<void> {
  const file = `${scratchPath(workRoot(deps.config), planId)}.copied-at`;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, String(Date.now() - 1_000));
}

async function copiedAt(deps: PhaseDeps, planId: string): Promise<number> {
  const text = await readFile(`${scratchPath(workRoot(deps.config), planId)}.copied-at`, 'utf8').catch(
    () => '',
  );
  const at = Number(text);
  return Number.isFinite(at) && at > 0 ? at : Date.now();
}
