import type { ScriptedMessage } from '../../tests/support/model-server.js';
import { narration, PLAN } from './script.js';

// What the model says over one whole loop, in order: the stand-in answers each accepted request with the next
// entry. The plan conversation is as long as the single-run figure's (20 turns: the question at turn 8, the
// plan at turn 20), then a revision round of 3 turns in the same conversation, then the execution: 6 turns,
// two of them changes a person allows (manual mode). Each turn narrates (~200 characters, thinking on the 5.5
// models) and calls one tool, read-only ones in rotation while planning.

const call = (turn: number, name: string, input: Record<string, unknown>): ScriptedMessage => ({
  kind: 'message',
  content: [
    { type: 'text', text: narration(turn) },
    { type: 'tool_use', id: `toolu_loop_${turn}`, name, input },
  ],
});

export const QUESTION = 'Which page size should the list endpoints use by default?';
export const ANSWER = '50';
export const FEEDBACK = 'Also cover listOrders with a test of its own, please.';

const QUESTIONS = {
  questions: [
    {
      question: QUESTION,
      header: 'Page size',
      multiSelect: false,
      options: [
        { label: '20', description: 'Small pages, more requests.' },
        { label: ANSWER, description: 'What most clients ask for.' },
      ],
    },
  ],
};

const USERS_TS =
  "import { db } from './db.js';\n\nexport function listUsers({ limit = 50, offset = 0 } = {}) {\n" +
  "  return db.query('select * from users limit ' + limit + ' offset ' + offset);\n}\n";
const ORDERS_TEST =
  "import { listOrders } from '../src/orders.js';\n\nlistOrders({ limit: 2, offset: 0 });\n";

const READS: readonly [string, Record<string, unknown>][] = [
  ['Read', { file_path: 'README.md' }],
  ['Glob', { pattern: '*' }],
  ['Read', { file_path: 'src/users.ts' }],
  ['Grep', { pattern: 'query' }],
  ['Read', { file_path: 'src/orders.ts' }],
  ['Read', { file_path: 'test/users.test.ts' }],
  ['Read', { file_path: 'src/db.ts' }],
  ['Grep', { pattern: 'listOrders' }],
  ['Read', { file_path: 'package.json' }],
];

/** The model's answers, in order. */
export function loopScript(): ScriptedMessage[] {
  let turn = 0;
  const next = (name: string, input: Record<string, unknown>) => call(++turn, name, input);
  const read = () => {
    const [name, input] = READS[turn % READS.length]!;
    return next(name, input);
  };
  const reads = (n: number) => Array.from({ length: n }, read);
  return [
    // The plan run: explores, asks (turn 8), explores on once answered, hands in the plan (turn 20).
    ...reads(7),
    next('AskUserQuestion', QUESTIONS),
    ...reads(11),
    next('ExitPlanMode', { plan: PLAN }),
    // The revision round, in the same conversation.
    ...reads(2),
    next('ExitPlanMode', { plan: `${PLAN}4. A test of its own for listOrders in test/orders.test.ts.\n` }),
    // The execution (manual: each change waits for a person).
    ...reads(3),
    next('Write', { file_path: 'src/users.ts', content: USERS_TS }),
    next('Write', { file_path: 'test/orders.test.ts', content: ORDERS_TEST }),
    { kind: 'message', content: [{ type: 'text', text: 'Both changes are made; the tests cover them.' }] },
  ];
}
