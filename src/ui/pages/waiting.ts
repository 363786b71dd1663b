import type { Question, Run, ToolApproval } from '../../domain/types.js';
import type { AppDeps } from '../../http/deps.js';
import { html, type SafeHtml } from '../html.js';
import { time } from '../layout.js';

// What a run waiting on a person waits on, and where that person acts: the page of a pending tool call, or
// the question on the questions page. The plan page, the run page and the queue link there.

/** One thing a person is to do for a run. */
export type Waiting =
  | { kind: 'tool_approval'; runId: string; approval: ToolApproval }
  | { kind: 'question'; runId: string; question: Question };

/** The page of one pending (or decided) tool call. */
export const toolApprovalPath = (id: string) => `/ui/tool-approvals/${encodeURIComponent(id)}`;

/** A question's form on the questions page. */
export const questionPath = (id: string) => `/ui/questions#q-${encodeURIComponent(id)}`;

/** The pending tool calls and questions of the runs among `runs` that wait on a person. */
export async function waitingOf(deps: Pick<AppDeps, 'store'>, runs: readonly Run[]): Promise<Waiting[]> {
  const parked = runs.filter((r) => r.status === 'awaiting_input' && !r.waitingOn);
  const found = await Promise.all(
    parked.map(async (r): Promise<Waiting[]> => {
      const [approvals, questions] = await Promise.all([
        deps.store.listToolApprovals({ status: 'pending', runId: r.id, limit: 20 }),
        deps.store.listQuestions({ status: 'pending', runId: r.id, limit: 20 }),
      ]);
      return [
        ...approvals.map((approval) => ({ kind: 'tool_approval' as const, runId: r.id, approval })),
        ...questions.map((question) => ({ kind: 'question' as const, runId: r.id, question })),
      ];
    }),
  );
  return found.flat();
}

/** One link per thing waited on: "tool call Write — decide it" / "a question — answer it". */
export function waitingLinks(waits: readonly Waiting[]): SafeHtml {
  return html`<ul class="waiting-on">${waits.map((w) =>
    w.kind === 'tool_approval'
      ? html`<li><a class="act" href="${toolApprovalPath(w.approval.id)}">Decide the tool call <code>${w.approval.tool}</code></a> <span class="muted">(asked ${time(w.approval.createdAt)})</span></li>`
      : html`<li><a class="act" href="${questionPath(w.question.id)}">Answer the agent's question</a> <span class="muted">(asked ${time(w.question.createdAt)})</span></li>`,
  )}</ul>`;
}

/** A short form for a table cell: one link per thing waited on. */
export function waitingCell(waits: readonly Waiting[]): SafeHtml {
  return html`${waits.map(
    (w, i) =>
      html`${i ? html`<br>` : ''}${
        w.kind === 'tool_approval'
          ? html`<a class="act" href="${toolApprovalPath(w.approval.id)}">decide tool call <code>${w.approval.tool}</code></a>`
          : html`<a class="act" href="${questionPath(w.question.id)}">answer a question</a>`
      }`,
  )}`;
}
