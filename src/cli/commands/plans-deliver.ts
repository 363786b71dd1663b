import type { PlanJson } from '../../http/contract/index.js';
import { actionCommand } from './listing.js';
import { idPath } from './request.js';

// drydock plans deliver ID: POST /v1/plans/:id/deliver.

export const deliverCommand = actionCommand<PlanJson>('POST', {
  about: `Delivers an executed plan's result now: pushes its branch drydock/ID to the workspace's remote and, for a
GitHub repository, opens the pull request (steps done before are not repeated). For a failed delivery, one
that waits for its next try, or an executed plan whose delivery was off. Follow it with drydock plans show ID.`,
  path: (id) => `/v1/plans/${idPath(id)}/deliver`,
  render: (p) =>
    `plan ${p.id}: delivery ${p.delivery?.status ?? 'pending'} (branch ${p.delivery?.branch ?? `drydock/${p.id}`})`,
});
