import type { PlanJson } from '../../http/contract/index.js';
import { idPath, JSON_HELP, jsonOption, out, printedJson, type Subcommand } from './common.js';

// drydock plans deliver ID: POST /v1/plans/:id/deliver.

export const deliverCommand: Subcommand = {
  synopsis: 'ID [--json]',
  help: `Delivers an executed plan's result now: pushes its branch drydock/ID to the workspace's remote and, for a
GitHub repository, opens the pull request (steps done before are not repeated). For a failed delivery, one
that waits for its next try, or an executed plan whose delivery was off. Follow it with drydock plans show ID.

${JSON_HELP}`,
  options: { ...jsonOption },
  positionals: ['ID'],
  async run({ client, values, args }) {
    const res = await client.request('POST', `/v1/plans/${idPath(args[0]!)}/deliver`);
    if (printedJson(values, res.text)) return;
    const p = res.body as PlanJson;
    out(
      `plan ${p.id}: delivery ${p.delivery?.status ?? 'pending'} (branch ${p.delivery?.branch ?? `drydock/${p.id}`})`,
    );
  },
};
