import type { ScriptedMessage } from '../../tests/support/model-server.js';
import { narration, PLAN } from './script.js';

// What the model says over one whole loop (plan → question → answer → plan → revision → plan → approval →
// execution with two changes a person allows), in order: the stand-in answers each accepted request with
// the next entry. Each turn narrates (~200 characters, thinking on the 5.5 models) and calls one tool.

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
  '  return db.query(`select * from users limit ${limit} offset ${offset}`);\n}\n';
const ORDERS_TEST =
  "import { listOrders } from '../src/orders.js';\n\nlistOrders({ limit: 2, offset: 0 });\n";

/** The model's answers, in order; `PERSON_STEPS` says where a person acts in between. */
export function loopScript(): ScriptedMessage[] {
  let turn = 0;
  const next = (name: string, input: Record<string, unknown>) => call(++turn, name, input);
  return [
    // The plan run: explores, then asks.
    next('Read', { file_path: 'README.md' }),
    next('Glob', { pattern: '*' }),
    next('Read', { file_path: 'src/users.ts' }),
    next('Grep', { pattern: 'query' }),
    next('Read', { file_path: 'src/orders.ts' }),
    next('AskUserQuestion', QUESTIONS),
    // Answered: a little more, then the plan.
    next('Read', { file_path: 'test/users.test.ts' }),
    next('Read', { file_path: 'src/db.ts' }),
    next('ExitPlanMode', { plan: PLAN }),
    // The revision round, in the same conversation.
    next('Read', { file_path: 'package.json' }),
    next('Grep', { pattern: 'listOrders' }),
    next('ExitPlanMode', { plan: `${PLAN}4. A test of its own for listOrders in test/orders.test.ts.\n` }),
    // The execution (manual: each change waits for a person).
    next('Read', { file_path: 'src/users.ts' }),
    next('Write', { file_path: 'src/users.ts', content: USERS_TS }),
    next('Write', { file_path: 'test/orders.test.ts', content: ORDERS_TEST }),
    { kind: 'message', content: [{ type: 'text', text: 'Both changes are made; the tests cover them.' }] },
  ];
}
