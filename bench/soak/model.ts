import {
  type ModelServer,
  type ScriptedMessage,
  startModelServer,
} from '../../tests/support/model-server.js';
import { bump } from './stats.js';

// The scripted model: the tests' Messages API stand-in (real HTTP, real SSE framing, request validation), run
// in the orchestrator so it outlives every daemon restart. Every answer is a function of the request alone, so
// a run retried after a SIGKILL gets the same answers it would have got:
//   - execute phase (the request offers Write/Edit/Bash): a short text, end_turn: the run completes;
//   - plan phase, the conversation's first prompt marked for a question and no AskUserQuestion asked yet in
//     the conversation: AskUserQuestion (one question, three options): the run parks until someone answers;
//   - otherwise: ExitPlanMode with a short plan: the run ends `planned` (a revision round plans again).

export const ASK_MARKER = '[soak:ask]';

export const PLAN = [
  '## Tidy the README',
  '',
  '1. Move the prerequisites to the top.',
  '2. Fix the two dead links.',
  '',
].join('\n');

export const QUESTION = {
  question: 'Which part of the repository should the plan cover?',
  header: 'Scope',
  options: [
    { label: 'Docs only', description: 'README and guides' },
    { label: 'Code and docs', description: 'Everything the change touches' },
    { label: 'Tests', description: 'Only the test suite' },
  ],
  multiSelect: false,
};

export interface ModelTally {
  served: number;
  plans: number;
  questions: number;
  executes: number;
  /** Requests by the x-api-key they came with: each replica of the drill has a key of its own. */
  byKey: Record<string, number>;
}

function firstUserText(body: any): string {
  const first = body?.messages?.[0];
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  for (const b of first.content ?? []) if (b?.type === 'text') return String(b.text);
  return '';
}

function askedBefore(body: any): boolean {
  for (const m of body?.messages ?? []) {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue;
    if (m.content.some((b: any) => b?.type === 'tool_use' && b.name === 'AskUserQuestion')) return true;
  }
  return false;
}

/** Job prompts carry the marker; pull request prompts name `owner/repo#N`: those with N % askEvery == 3 ask. */
export function wantsQuestion(prompt: string, askEvery: number): boolean {
  if (prompt.includes(ASK_MARKER)) return true;
  const m = /Hello-World#(\d+)/.exec(prompt);
  return m !== null && Number(m[1]) % askEvery === 3;
}

export function respond(body: any, askEvery: number, delayMs: number, tally: ModelTally): ScriptedMessage {
  tally.served += 1;
  const tools: string[] = (body?.tools ?? []).map((t: any) => t?.name);
  if (tools.includes('Write') || tools.includes('Bash')) {
    tally.executes += 1;
    return { kind: 'message', delayMs, content: [{ type: 'text', text: 'Nothing to change: done.' }] };
  }
  if (!askedBefore(body) && wantsQuestion(firstUserText(body), askEvery)) {
    tally.questions += 1;
    return {
      kind: 'message',
      delayMs,
      content: [
        { type: 'text', text: 'One question before I plan.' },
        { type: 'tool_use', name: 'AskUserQuestion', input: { questions: [QUESTION] } },
      ],
    };
  }
  tally.plans += 1;
  return {
    kind: 'message',
    delayMs,
    content: [
      { type: 'text', text: 'Here is the plan.' },
      { type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN } },
    ],
  };
}

export interface ScriptedModel {
  server: ModelServer;
  tally: ModelTally;
}

/** `delayMs`: before every answer's first byte; a function is asked once per answer (the drills vary it). */
export async function startScriptedModel(
  askEvery: number,
  delayMs: number | (() => number),
): Promise<ScriptedModel> {
  const server = await startModelServer();
  const tally: ModelTally = { served: 0, plans: 0, questions: 0, executes: 0, byKey: {} };
  server.setFallback((req) => {
    // The server records every request for the tests; over a soak that would only grow this heap.
    if (server.requests.length > 256) server.requests.splice(0);
    // The key as the SDK sends it: x-api-key, or a bearer token.
    const key = req.headers['x-api-key'] ?? req.headers.authorization;
    bump(tally.byKey, typeof key === 'string' ? key.replace(/^Bearer\s+/i, '') : 'none');
    return respond(req.body, askEvery, typeof delayMs === 'number' ? delayMs : delayMs(), tally);
  });
  return { server, tally };
}
