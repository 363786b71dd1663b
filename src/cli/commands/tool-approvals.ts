import type { ToolApprovalJson } from '../../http/contract/index.js';
import { flag, JSON_HELP, jsonOption, RemoteUsageError, str } from './args.js';
import type { Group } from './group.js';
import { choiceFilter, idFilter, limitFilter, listCommand, showCommand } from './listing.js';
import { clean, dash, fields, oneLine, printAnswer } from './output.js';
import { idPath } from './request.js';
import { age, relative, when } from './times.js';

// drydock tool-approvals list|show|decide: tool calls an execute run parked for a person, over
// /v1/tool-approvals.

const STATUSES = ['pending', 'allowed', 'denied', 'timed_out', 'canceled'] as const;

const inputText = (input: unknown): string => JSON.stringify(input) ?? 'null';

export const toolApprovalsGroup: Group = {
  name: 'tool-approvals',
  summary: 'Tool calls waiting for a person during execution: list them, read one, allow or deny it.',
  commands: {
    list: listCommand<ToolApprovalJson>({
      about: "Lists tool approvals: id, status, tool, run, plan, age, deadline and the call's input.",
      filters: [
        choiceFilter('status', 'S', STATUSES, '(default: all)'),
        idFilter('run', "only this run's"),
        limitFilter(),
      ],
      path: '/v1/tool-approvals',
      show: {
        empty: 'no tool approvals',
        headers: ['ID', 'STATUS', 'TOOL', 'RUN', 'PLAN', 'AGE', 'EXPIRES', 'INPUT'],
        row: (a, now) => [
          a.id,
          a.status,
          a.tool,
          a.run_id,
          dash(a.plan_id),
          age(a.created_at, now),
          a.status === 'pending' ? relative(a.expires_at, now) : '-',
          oneLine(inputText(a.input), 80),
        ],
      },
    }),

    show: showCommand<ToolApprovalJson>({
      about: `Shows one tool approval, with the call's full input.`,
      path: (id) => `/v1/tool-approvals/${idPath(id)}`,
      render: (a, now) =>
        `${fields([
          ['tool approval', a.id],
          ['status', a.status],
          ['tool', a.tool],
          // An MCP call: its server, and its tool there.
          ...(a.mcp
            ? ([
                ['mcp server', a.mcp.server],
                ['mcp tool', a.mcp.tool],
              ] as [string, unknown][])
            : []),
          ['run', a.run_id],
          ['session', a.session_id],
          ['plan', a.plan_id],
          ['created', when(a.created_at, now)],
          ['expires', when(a.expires_at, now)],
          ['decided', when(a.decided_at, now)],
          ['decided_by', a.decided_by],
          ['message', a.message],
        ])}\n\ninput:\n${clean(JSON.stringify(a.input, null, 2) ?? 'null')}`,
    }),

    decide: {
      synopsis: 'ID --allow|--deny [--message M] [--json]',
      help: `Allows or denies a pending tool call; the run then resumes.

  --allow               let the tool call run
  --deny                refuse it (the agent reads --message)
  --message M           a note recorded with the decision, shown to the agent
${JSON_HELP}`,
      options: {
        allow: { type: 'boolean' },
        deny: { type: 'boolean' },
        message: { type: 'string' },
        ...jsonOption,
      },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const allow = flag(values, 'allow');
        if (allow === flag(values, 'deny'))
          throw new RemoteUsageError('give exactly one of --allow and --deny');
        const res = await client.request('POST', `/v1/tool-approvals/${idPath(args[0]!)}`, {
          decision: allow ? 'allow' : 'deny',
          message: str(values, 'message'),
        });
        printAnswer<ToolApprovalJson>(
          values,
          res,
          (a) => `tool approval ${a.id} ${a.status} (${a.tool}, run ${a.run_id})`,
        );
      },
    },
  },
};
