import { executeKickoff } from '../../src/agent/prompt.js';
import type { Decision, Plan } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import type { DecisionEffect } from '../../src/store/store.js';
import { mulberry32 } from '../../tests/support/prng.js';

// What the children share: identities, the seeded plan text, the what-if index, the approve rule.

export const APPROVER = 'approver-bench';
export const VIEWER = 'viewer-bench';
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

/**
 * The fix under test, as a what-if: pending plans by expiry. Leading with status matters: without ANALYZE
 * statistics SQLite prefers plans_queue (status=?) over a partial index on (expires_at) alone.
 */
export const EXPIRY_INDEX = 'bench_plans_pending_expiry';
export const CREATE_EXPIRY_INDEX = `CREATE INDEX IF NOT EXISTS ${EXPIRY_INDEX} ON plans (status, expires_at) WHERE status = 'pending_approval'`;
export const DROP_EXPIRY_INDEX = `DROP INDEX IF EXISTS ${EXPIRY_INDEX}`;
/** The statement Store.expirePlans runs, for its query plan (the PostgreSQL store writes $1 for both values). */
export const EXPIRE_SQL = `UPDATE plans SET status = 'expired', decided_at = ? WHERE status = 'pending_approval' AND expires_at <= ?`;

/** Small deterministic PRNG (mulberry32): the same seed gives the same store. */
export const prng = mulberry32;

const VERBS = ['Add', 'Move', 'Rename', 'Split', 'Validate', 'Cache', 'Log', 'Test', 'Document', 'Remove'];
const THINGS = [
  'the session loader',
  'the retry budget',
  'the cron parser',
  'the config schema',
  'the event log',
  'the HTTP error mapping',
  'the token check',
  'the workspace guard',
  'the queue metrics',
  'the migration runner',
];
const FILES = [
  'src/server/routes.ts',
  'src/db/users.ts',
  'src/lib/retry.ts',
  'src/config.ts',
  'tests/users.test.ts',
  'README.md',
  'src/jobs/worker.ts',
  'src/http/errors.ts',
];

/**
 * A plan as a model writes one (ExitPlanMode's markdown): a title, context, numbered steps, files, risks.
 * Its length is uniform in 0.3-1.7 × `meanBytes` (default 2,100: 0.6 to 3.6 KB); a short one is the title.
 */
export function planMarkdown(rand: () => number, n: number, meanBytes: number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const target = Math.round(meanBytes * (0.3 + 1.4 * rand()));
  const title = `# Plan ${n}: ${pick(VERBS).toLowerCase()} ${pick(THINGS)}`;
  if (target < 400)
    return `${title}\n\n${'Keep the tests green. '.repeat(8)}`.slice(0, Math.max(title.length, target));
  const lines = [
    title,
    '',
    '## Context',
    `The request asks to ${pick(VERBS).toLowerCase()} ${pick(THINGS)} without changing public behaviour.`,
    '',
    '## Steps',
  ];
  let step = 1;
  let size = lines.join('\n').length;
  while (size < target - 200) {
    const line = `${step}. ${pick(VERBS)} ${pick(THINGS)} in \`${pick(FILES)}\`, keeping the existing tests green.`;
    lines.push(line);
    size += line.length + 1;
    step += 1;
  }
  lines.push('', '## Files', `- \`${pick(FILES)}\``, `- \`${pick(FILES)}\``, '', '## Risks');
  lines.push(`- ${pick(THINGS)} is used by the scheduler; run the full suite before merging.`);
  return lines.join('\n');
}

/**
 * The approve rule of src/plans/decisions.ts for the bare Store.decidePlan baseline: pending, not expired,
 * the text the approver saw, not a requester, one approval per person; quorum reached makes the execute run.
 */
export function approveRule(
  identity: string,
  sha256: string,
  now: number,
): (plan: Plan, decisions: Decision[]) => DecisionEffect {
  return (plan, decisions) => {
    if (plan.status !== 'pending_approval' || plan.expiresAt <= now) {
      throw new Error(`plan ${plan.id} is ${plan.status}, not pending approval`);
    }
    if (plan.sha256 !== sha256) throw new Error(`plan ${plan.id}: sha256 differs`);
    if ((plan.requestedBy === identity || plan.owner === identity) && !plan.allowSelfApproval) {
      throw new Error(`plan ${plan.id}: self-approval`);
    }
    const approvers = decisions.filter((d) => d.kind === 'approve').map((d) => d.identity);
    if (approvers.includes(identity)) throw new Error(`plan ${plan.id}: already approved`);
    approvers.push(identity);
    const decision: Decision = {
      id: newId('dec'),
      planId: plan.id,
      kind: 'approve',
      identity,
      comment: null,
      sha256: plan.sha256,
      createdAt: now,
    };
    if (approvers.length < plan.approvalsRequired) return { decision };
    return {
      decision,
      planStatus: 'approved',
      run: {
        id: newId('run'),
        sessionId: plan.sessionId,
        jobId: plan.jobId,
        slotAt: null,
        source: plan.source,
        prompt: executeKickoff(approvers),
        requestedBy: plan.requestedBy,
        createdAt: now,
        overrides: {},
        conversationId: plan.conversationId,
        phase: 'execute',
        executesPlanId: plan.id,
      },
    };
  };
}
