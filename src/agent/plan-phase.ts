import { createHash } from 'node:crypto';
import type { ConversationFrame } from '../domain/frame.js';
import { isMcpTool } from '../domain/mcp-names.js';
import type { ConversationMessage, Plan, Run, Session } from '../domain/types.js';
import { newId } from '../ids.js';
import type { RunOutcome } from '../runs/queue.js';
import { removeCheckout } from '../workspace/checkout.js';
import { headCommit } from '../workspace/git.js';
import { planFootprint } from './footprint.js';
import { constantFrame } from './frame.js';
import { planMcpCall } from './mcp-calls.js';
import { planMemorySource, readMemory, withMemory } from './memory-source.js';
import type { PARKED, Phase, PhaseDeps, ToolResultBlock, ToolUse } from './phase.js';
import { movedBetweenRounds, type PlanningTree, removePlanningTree } from './planning-base.js';
import {
  BASE_SYSTEM_PROMPT,
  PLAN_CAPTURED,
  PLAN_MODE_DIRECTIVE,
  PLAN_REMINDER,
  planToolRefused,
  reviseKickoff,
} from './prompt.js';
import { isReadOnly, readOnlyTool, refuseCall } from './tool-calls.js';
import { PLAN_TOOLS, type Workspace } from './tools/index.js';
import { validatePlan } from './tools/plan-tools.js';
import type { TurnProse } from './tools/turn-prose.js';
import type { ToolResult } from './tools/types.js';

/** Plan mode: read, search, ask; ExitPlanMode captures the plan and ends the run. Nothing else runs. */
export class PlanPhase implements Phase {
  readonly constantFrame = constantFrame([BASE_SYSTEM_PROMPT, PLAN_MODE_DIRECTIVE], PLAN_TOOLS);
  /** Any turn may ask a question or hand in a plan that then waits for a person (cache-ttl.ts). */
  readonly waits = 'any_turn';

  constructor(
    private readonly deps: PhaseDeps,
    private readonly run: Run,
    private readonly session: Session,
    readonly workspace: Workspace,
    private readonly conversationId: string,
    /** The run's: a search under way stops when the run is aborted. */
    private readonly signal: AbortSignal,
    /** A git workspace's run: the clean checkout of the commit it plans on (`workspace` is in it). */
    private readonly tree: PlanningTree | null = null,
  ) {}

  /**
   * The constants and the project memory (memory.ts): a pull request's from its base commit, never its head;
   * a git workspace's from the checkout of the commit the run plans on.
   */
  async frame(): Promise<ConversationFrame> {
    const source = this.tree
      ? { kind: 'checkout' as const, workspace: this.workspace, commit: this.tree.base.commit }
      : planMemorySource(this.run, this.workspace);
    return withMemory(this.constantFrame, await readMemory(this.deps, this.run, source));
  }

  /**
   * The task, or for a revision round the person's feedback (added after the plan receipt), worded here from
   * the revise decision on the plan it revises: the plan service records the decision, the phase says it to
   * the model.
   */
  async opening(): Promise<string> {
    if (!this.run.revisesPlanId) return this.run.prompt;
    const decisions = await this.deps.store.listDecisions(this.run.revisesPlanId);
    const asked = decisions.find((d) => d.kind === 'revise');
    if (!asked) return this.run.prompt;
    const kickoff = reviseKickoff(asked.identity, asked.comment ?? '');
    // A round on another commit than the plan it revises: the model is told what moved under what it read.
    const revised = this.tree ? await this.deps.store.getPlan(this.run.revisesPlanId) : null;
    const moved = this.tree && revised ? await movedBetweenRounds(this.tree, revised.workspaceCommit) : null;
    return moved ? `${kickoff}\n\n${moved}` : kickoff;
  }

  async call(
    use: ToolUse,
    _prior: ToolResultBlock[],
    prose: TurnProse,
  ): Promise<ToolResult | typeof PARKED | { planned: ToolResult }> {
    if (isReadOnly(use)) return readOnlyTool(this.deps, this.run.id, this.workspace, use, this.signal);
    // Only the MCP tools the conversation offers as plan tools run; any other is refused (mcp-calls.ts).
    if (isMcpTool(use.name)) return planMcpCall(this.deps, this.run, use);
    if (use.name === 'ExitPlanMode') {
      const r = await this.capturePlan(use, prose);
      return r.isError ? r : { planned: r };
    }
    // The gate: whatever the model asks for, only plan tools run in plan mode.
    return refuseCall(this.deps.events, this.run, use, planToolRefused(use.name));
  }

  async parkedResults(): Promise<ToolResultBlock[] | null> {
    return null;
  }

  /**
   * The plan's receipt is the run's last message, but the run did not end `planned`: it died between the
   * two writes. Asked again, the model would propose a second plan beside the first; the run is planned
   * with the plan it proposed.
   */
  async endedBefore(messages: readonly ConversationMessage[]): Promise<RunOutcome | null> {
    const [asked, receipt] = messages.slice(-2);
    if (asked?.role !== 'assistant' || receipt?.role !== 'user' || receipt.runId !== this.run.id) return null;
    for (const block of asked.content as { type?: string; name?: string; id?: string }[]) {
      if (block.type !== 'tool_use' || block.name !== 'ExitPlanMode' || !block.id) continue;
      const plan = await this.deps.store.findPlan(this.run.id, block.id);
      if (plan) {
        await this.named(plan);
        return { status: 'planned' };
      }
    }
    return null;
  }

  async endTurn(reminded: boolean): Promise<RunOutcome | { remind: string }> {
    // The model ended its turn without a plan: remind it once, then give up.
    if (reminded) return { status: 'failed', error: 'the model ended its turn without proposing a plan' };
    return { remind: PLAN_REMINDER };
  }

  async finish(outcome: RunOutcome): Promise<RunOutcome> {
    // Nothing on disk is touched by a process that lost the run: the checkout is the new holder's now.
    await this.deps.store.confirmHold(this.run.id);
    // A pull request's planning worktree is only needed while the run can still continue.
    if (this.run.checkout && outcome.status !== 'awaiting_input') {
      await removeCheckout(this.run.checkout.clone, this.workspace.root);
    }
    // So is a git workspace's planning checkout.
    if (this.tree && outcome.status !== 'awaiting_input') await removePlanningTree(this.tree);
    return outcome;
  }

  private async capturePlan(use: ToolUse, prose: TurnProse): Promise<ToolResult> {
    const run = this.run;
    let plan = await this.deps.store.findPlan(run.id, use.id);
    // Checked again when the plan was stored already (a run taken up again): the same call and turn give the
    // same source, for the event.
    const parsed = validatePlan(use.input, prose);
    if (!plan) {
      if (!parsed.ok) return { content: parsed.error, isError: true };
      plan = await this.propose(use, parsed.value.plan);
    }
    // Also when the plan was stored but the run died before it named it: the call is run again.
    await this.named(plan);
    await this.deps.events.emit(run.id, 'plan_proposed', {
      plan_id: plan.id,
      sha256: plan.sha256,
      workspace_commit: plan.workspaceCommit,
      round: plan.round,
      previous_plan_id: plan.previousPlanId,
      markdown: plan.markdown,
      // Where the text came from: the call's `plan`, or (the call had none) the turn's text or thinking.
      ...(parsed.ok ? { plan_source: parsed.value.source } : {}),
    });
    return {
      content: `${PLAN_CAPTURED} (plan ${plan.id}, sha256 ${plan.sha256.slice(0, 12)})`,
      isError: false,
    };
  }

  /**
   * Hands the plan to the plan service. Its terms (approvals, expiry, execute mode, self-approval, network)
   * are not set here: the phase passes what they are made from, and the plan service resolves them
   * (src/plans/policy.ts), so the approval rules have one home.
   */
  private async propose(use: ToolUse, markdown: string): Promise<Plan> {
    const { store, clock, config, lifecycle } = this.deps;
    const run = this.run;
    const previous = run.revisesPlanId ? await store.getPlan(run.revisesPlanId) : null;
    const workspaceCommit = await this.pinnedCommit();
    return lifecycle.propose({
      id: newId('pln'),
      runId: run.id,
      sessionId: run.sessionId,
      conversationId: this.conversationId,
      toolUseId: use.id,
      markdown,
      sha256: createHash('sha256').update(markdown).digest('hex'),
      workspaceCommit,
      // What the plan did not see: the workspace's uncommitted changes when its run began (planning-base.ts).
      uncommitted: this.tree && this.tree.base.uncommitted.count > 0 ? this.tree.base.uncommitted : null,
      // What the plan stands on, for the staleness rule (plans/staleness.ts): only a plan on a commit has one.
      footprint: workspaceCommit
        ? await planFootprint(this.workspace, await store.loadConversation(this.conversationId), markdown)
        : null,
      round: previous ? previous.round + 1 : 1,
      previousPlanId: previous?.id ?? null,
      requestedBy: run.requestedBy,
      createdAt: clock.now(),
      jobId: run.jobId,
      triggerId: run.triggerId ?? previous?.triggerId ?? null,
      source: run.source,
      // The job's or trigger's options over the session's, and the configured defaults: the rules in force
      // when the plan is made travel with it.
      terms: {
        overrides: run.overrides,
        defaults: this.session.defaults,
        plans: config.plans,
        networkDefaults: config.execute.network_default_domains,
      },
      owner: this.session.owner,
      subject: run.subject,
    });
  }

  /**
   * The commit a plan is pinned to: a pull request's head commit it was checked out at, the commit another
   * event named (its worktree's, when the event named only a branch or tag), or the commit a git workspace's
   * run read (its planning checkout's). A plain workspace has none, whatever `.git` appeared in it since its
   * session was made; nor has a repository that had no commit when the run began (it read the working tree).
   */
  private async pinnedCommit(): Promise<string | null> {
    const c = this.run.checkout;
    if (c?.kind === 'commit') return c.sha ?? headCommit(this.workspace.root);
    if (c) return c.headSha;
    return this.tree?.base.commit ?? null;
  }

  /** The run names the plan it proposed. */
  private async named(plan: Plan): Promise<void> {
    if (this.run.planId === plan.id) return;
    await this.deps.store.updateRun(this.run.id, { planId: plan.id });
    this.run.planId = plan.id;
  }
}
