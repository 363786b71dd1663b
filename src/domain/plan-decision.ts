import type { NewRun } from './new-run.js';
import type { Decision, PlanStatus } from './types.js';

/** What a decision does, computed inside the store's transaction from the plan's freshest state. */
export interface DecisionEffect {
  decision: Decision;
  /** The plan's new status, if it changes. */
  planStatus?: PlanStatus;
  /** A run to create with the decision: the execute run after approval, or the revision round. */
  run?: NewRun;
  /** An approval on a head that moved on without touching the plan's footprint: the head it executes from. */
  executionBase?: string;
}
