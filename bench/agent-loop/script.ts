import type { ScriptedMessage } from '../../tests/support/model-server.js';

// What the zero-latency model says, as a function of the request alone, so every run (and every replay of a
// run's requests) gets the same answers: the turn number is the number of tool_result blocks in the
// request, plus one. Turns 1..N-1 narrate (~200 characters, which the server streams as ~9 text deltas)
// and call one cheap read-only tool in rotation; turn N narrates and hands in the plan.

/** The workspace every run looks at: a handful of small files. */
export const WORKSPACE_FILES: Readonly<Record<string, string>> = {
  'README.md': '# shop\n\nA small service with users and orders.\n',
  'package.json': '{\n  "name": "shop",\n  "version": "1.0.0",\n  "type": "module"\n}\n',
  'src/db.ts': 'export const db = {\n  query(sql: string) {\n    return [] as unknown[];\n  },\n};\n',
  'src/users.ts':
    "import { db } from './db.js';\n\nexport function listUsers() {\n  return db.query('select * from users');\n}\n",
  'src/orders.ts':
    "import { db } from './db.js';\n\nexport function listOrders() {\n  return db.query('select * from orders');\n}\n",
  'test/users.test.ts': "import { listUsers } from '../src/users.js';\n\nlistUsers();\n",
};

const TOOL_CALLS: readonly { name: string; input: Record<string, unknown> }[] = [
  { name: 'Glob', input: { pattern: '*' } },
  { name: 'Read', input: { file_path: 'src/users.ts' } },
  { name: 'Grep', input: { pattern: 'query' } },
];

export const PLAN = [
  '## Add pagination to the list endpoints',
  '',
  '1. `listUsers` in src/users.ts takes `{ limit, offset }` and passes them to the query.',
  '2. The same for `listOrders` in src/orders.ts.',
  '3. Cover both in test/users.test.ts and a new test/orders.test.ts.',
  '',
].join('\n');

const NARRATION =
  'I am working through the repository to understand how the list endpoints query the database, which ' +
  'files would change, and what the tests cover today, before I propose a plan for the change.';

/** About 200 characters, different every turn. */
export function narration(turn: number): string {
  return `Turn ${turn}: ${NARRATION}`.slice(0, 200);
}

function countToolResults(body: any): number {
  let n = 0;
  for (const m of body?.messages ?? []) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const b of m.content) if (b?.type === 'tool_result') n += 1;
  }
  return n;
}

/** The tool whose call and result fall in the cycle that ends with turn `turn` (1-based): the previous turn's. */
export function toolBeforeTurn(turn: number): string {
  return turn <= 1 ? 'none' : TOOL_CALLS[(turn - 2) % TOOL_CALLS.length]!.name;
}

export function turnResponse(body: any, turns: number): ScriptedMessage {
  const turn = countToolResults(body) + 1;
  const text = { type: 'text' as const, text: narration(turn) };
  if (turn >= turns) {
    return {
      kind: 'message',
      content: [text, { type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN } }],
    };
  }
  const call = TOOL_CALLS[(turn - 1) % TOOL_CALLS.length]!;
  return { kind: 'message', content: [text, { type: 'tool_use', name: call.name, input: call.input }] };
}
