import type { RunCheckout, RunDefaults, RunPhase, RunSource } from './types.js';

/** A run to create: by a person, a fired slot, a decision or a trigger (queued until claimed). */
export interface NewRun {
  id: string;
  sessionId: string;
  jobId: string | null;
  slotAt: number | null;
  source: RunSource;
  prompt: string;
  requestedBy: string;
  createdAt: number;
  overrides?: RunDefaults;
  /** Continue this conversation (a revision round, the execute phase); default: a new one. */
  conversationId?: string;
  phase?: RunPhase;
  revisesPlanId?: string;
  executesPlanId?: string;
  triggerId?: string;
  deliveryId?: string;
  subject?: string;
  checkout?: RunCheckout;
}
