import { approvalContract } from './approvals.js';
import { cursorContract } from './cursors.js';
import type { StoreFactory } from './fixtures.js';
import { jobListingContract } from './job-listing.js';
import { jobContract } from './jobs.js';
import { mcpSelectionContract } from './mcp-selection.js';
import { outboxContract } from './outbox.js';
import { planContract } from './plans.js';
import { runContract } from './runs.js';
import { sessionContract } from './sessions.js';
import { stateContract } from './state.js';
import { triggerContract } from './triggers.js';
import { usageContract } from './usage.js';

export type { StoreFactory, StoreUnderTest } from './fixtures.js';

/** The Store contract, every aggregate of it, registered for one implementation. */
export function storeContract(factory: StoreFactory): void {
  sessionContract(factory);
  jobContract(factory);
  jobListingContract(factory);
  runContract(factory);
  approvalContract(factory);
  planContract(factory);
  triggerContract(factory);
  outboxContract(factory);
  stateContract(factory);
  mcpSelectionContract(factory);
  cursorContract(factory);
  usageContract(factory);
}
