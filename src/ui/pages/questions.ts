import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { allows } from '../../auth/tokens.js';
import { QuestionError } from '../../runs/service.js';
import type { Question } from '../../store/types.js';
import type { UiEnv } from '../env.js';
import { type FormFields, field, fields } from '../form.js';
import { html } from '../html.js';
import { alertBox, csrfField, time, uiPath } from '../layout.js';
import { signedIn, type UiContext } from './context.js';

interface Asked {
  question: string;
  header: string;
  multiSelect: boolean;
  options: { label: string; description: string }[];
}

/** The questions of a stored AskUserQuestion call; malformed entries are skipped, not trusted. */
function asked(q: Question): Asked[] {
  const list = (q.questions as { questions?: unknown })?.questions;
  if (!Array.isArray(list)) return [];
  return list.flatMap((raw): Asked[] => {
    const x = raw as Partial<Asked>;
    if (typeof x?.question !== 'string' || !Array.isArray(x.options)) return [];
    const options = x.options.filter(
      (o): o is { label: string; description: string } => typeof o?.label === 'string',
    );
    return [
      {
        question: x.question,
        header: typeof x.header === 'string' ? x.header : '',
        multiSelect: x.multiSelect === true,
        options: options.map((o) => ({
          label: o.label,
          description: typeof o.description === 'string' ? o.description : '',
        })),
      },
    ];
  });
}

/** The answers a form carries, keyed by question text as RunService.answer expects. */
function answersFrom(form: FormFields, questions: Asked[]): Record<string, string | string[]> {
  const answers: Record<string, string | string[]> = {};
  questions.forEach((q, i) => {
    const name = `q${i}`;
    if (q.multiSelect) {
      const picked = fields(form, name);
      if (picked.length) answers[q.question] = picked;
    } else {
      const picked = field(form, name);
      if (picked !== undefined) answers[q.question] = picked;
    }
  });
  return answers;
}

/** GET /ui/questions and the answer forms. */
export function questionRoutes({ app, deps, guard }: UiContext): void {
  const { store } = deps;

  async function show(
    c: Context<UiEnv>,
    shown: { status?: ContentfulStatusCode; error?: string; notice?: string; errorFor?: string } = {},
  ): Promise<Response> {
    const pending = await store.listQuestions({ status: 'pending', limit: 100 });
    const canAnswer = allows(c.get('viewer').role, 'decide');
    const body = html`<h1>Pending questions</h1>
${alertBox(shown.errorFor ? undefined : shown.error, shown.notice)}
${!canAnswer && html`<p class="hint">Your role (${c.get('viewer').role}) may read questions but not answer them.</p>`}
${pending.length ? pending.map((q) => questionForm(c, q, canAnswer, shown.errorFor === q.id ? shown.error : undefined)) : html`<p>No questions are waiting for an answer.</p>`}`;
    return c.html(signedIn(c, 'questions', 'Questions', body), shown.status ?? 200);
  }

  app.get('/questions', guard, (c) =>
    show(c, { notice: c.req.query('done') === 'answered' ? 'Your answer was sent to the run.' : undefined }),
  );

  app.post('/questions/:id/answer', guard, async (c) => {
    const id = c.req.param('id');
    const viewer = c.get('viewer');
    if (!allows(viewer.role, 'decide')) {
      return show(c, { status: 403, error: `Your role (${viewer.role}) may not answer questions.` });
    }
    const q = await store.getQuestion(id);
    if (!q) return show(c, { status: 404, error: `There is no question ${id}.` });
    try {
      await deps.runs.answer(id, answersFrom(c.get('form'), asked(q)), viewer.identity);
    } catch (err) {
      if (!(err instanceof QuestionError)) throw err;
      const status = err.kind === 'not_found' ? 404 : err.kind === 'not_pending' ? 409 : 422;
      return show(c, { status, error: err.message, errorFor: id });
    }
    return c.redirect('/ui/questions?done=answered', 303);
  });
}

function questionForm(c: Context<UiEnv>, q: Question, canAnswer: boolean, error: string | undefined) {
  const questions = asked(q);
  return html`<section class="question" aria-labelledby="h-${q.id}">
<h2 id="h-${q.id}">Question from run <a href="${uiPath('runs', q.runId)}">${q.runId}</a></h2>
<p class="muted">Asked ${time(q.createdAt)}; expires ${time(q.expiresAt)}</p>
${alertBox(error)}
<form method="post" action="/ui/questions/${encodeURIComponent(q.id)}/answer" class="answer">
  ${csrfField(c.get('csrf'))}
  ${questions.map(
    (x, i) => html`<fieldset>
    <legend>${x.header && html`<strong>${x.header}:</strong> `}${x.question}${x.multiSelect ? ' (choose one or more)' : ''}</legend>
    ${x.options.map((o, j) => {
      const id = `${q.id}-${i}-${j}`;
      return html`<div class="choice">
      <input type="${x.multiSelect ? 'checkbox' : 'radio'}" id="${id}" name="q${i}" value="${o.label}"${
        !x.multiSelect && j === 0 ? html` required` : ''
      }>
      <label for="${id}">${o.label}</label>${o.description && html` <span class="muted">— ${o.description}</span>`}
    </div>`;
    })}
  </fieldset>`,
  )}
  ${canAnswer && html`<button type="submit">Send answer</button>`}
</form>
</section>`;
}
