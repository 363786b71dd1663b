import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { allows } from '../../auth/tokens.js';
import { planTitle } from '../../domain/plan-title.js';
import { MAX_FREE_TEXT_CHARS, shortHeader } from '../../domain/questions.js';
import type { Plan, Question, Run, Session } from '../../domain/types.js';
import { instructionsOf } from '../../plans/plan-context.js';
import { QuestionError } from '../../runs/service.js';
import type { UiEnv } from '../env.js';
import { pageStatus } from '../errors.js';
import { type FormFields, field, fields } from '../form.js';
import { html } from '../html.js';
import { alertBox, csrfField, time, uiPath } from '../layout.js';
import { statusTag } from '../status-words.js';
import { signedIn, type UiContext } from './page-context.js';

interface Asked {
  question: string;
  header: string;
  multiSelect: boolean;
  options: { label: string; description: string; preview: string }[];
}

/** The questions of a stored AskUserQuestion call; malformed entries are skipped, not trusted. */
function asked(q: Question): Asked[] {
  const list = (q.questions as { questions?: unknown })?.questions;
  if (!Array.isArray(list)) return [];
  return list.flatMap((raw): Asked[] => {
    const x = raw as { question?: unknown; header?: unknown; multiSelect?: unknown; options?: unknown };
    if (typeof x?.question !== 'string' || !Array.isArray(x.options)) return [];
    const options = (x.options as { label?: unknown; description?: unknown; preview?: unknown }[]).filter(
      (o) => typeof o?.label === 'string',
    );
    return [
      {
        question: x.question,
        header: typeof x.header === 'string' ? x.header : '',
        multiSelect: x.multiSelect === true,
        options: options.map((o) => ({
          label: o.label as string,
          description: typeof o.description === 'string' ? o.description : '',
          preview: typeof o.preview === 'string' ? o.preview : '',
        })),
      },
    ];
  });
}

/**
 * The answers a form carries, keyed by question text as RunService.answer expects. Question i has the
 * options `q<i>` (radios, or checkboxes for multiSelect) and the person's own answer `q<i>-other`: for a
 * single choice, the "Other" radio has an empty value, and a chosen option with text of one's own as well
 * is refused rather than guessed at; for multiSelect the text is one more entry beside the ticked options.
 * Whether the answers fit the questions is RunService's to check.
 */
function answersFrom(
  form: FormFields,
  questions: Asked[],
): { answers: Record<string, string | string[]> } | { error: string } {
  const answers: Record<string, string | string[]> = {};
  for (const [i, q] of questions.entries()) {
    const name = `q${i}`;
    const own = field(form, `${name}-other`)?.trim() ?? '';
    if (q.multiSelect) {
      const picked = [...fields(form, name), ...(own === '' ? [] : [own])];
      if (picked.length) answers[q.question] = picked;
      continue;
    }
    const picked = field(form, name) ?? '';
    if (picked !== '' && own !== '') {
      return {
        error: `Question ${JSON.stringify(q.question)}: choose one of the options or write your own answer (with Other), not both.`,
      };
    }
    if (picked !== '' || own !== '') answers[q.question] = picked !== '' ? picked : own;
  }
  return { answers };
}

/** GET /ui/questions and the answer forms. */
export function questionRoutes({ app, deps, guard }: UiContext): void {
  const { store } = deps;

  async function show(
    c: Context<UiEnv>,
    shown: { status?: ContentfulStatusCode; error?: string; notice?: string; errorFor?: string } = {},
  ): Promise<Response> {
    const pending = await store.listQuestions({ status: 'pending', limit: 100 });
    const contexts = await Promise.all(pending.map((q) => taskOf(store, q)));
    const canAnswer = allows(c.get('viewer').role, 'decide');
    const body = html`<h1>Pending questions</h1>
${alertBox(shown.errorFor ? undefined : shown.error, shown.notice)}
${!canAnswer && html`<p class="hint">Your role (${c.get('viewer').role}) may read questions but not answer them.</p>`}
${pending.length ? pending.map((q, i) => questionForm(c, q, contexts[i]!, canAnswer, shown.errorFor === q.id ? shown.error : undefined)) : html`<p>No questions are waiting for an answer.</p>`}`;
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
    const given = answersFrom(c.get('form'), asked(q));
    if ('error' in given) return show(c, { status: 422, error: given.error, errorFor: id });
    try {
      await deps.runs.answer(id, given.answers, viewer.identity);
    } catch (err) {
      if (!(err instanceof QuestionError)) throw err;
      return show(c, { status: pageStatus(err), error: err.message, errorFor: id });
    }
    return c.redirect('/ui/questions?done=answered', 303);
  });
}

/** The question's tag, cut as people see tags; the whole header stays in the tooltip. */
function headerTag(header: string) {
  if (header.trim() === '') return '';
  const short = shortHeader(header);
  return short === header.trim()
    ? html`<strong>${short}:</strong> `
    : html`<strong title="${header}">${short}:</strong> `;
}

/** What the question is about: the run that asks, its session and workspace, the plan it plans or carries out. */
interface Task {
  run: Run | null;
  session: Session | null;
  plan: Plan | null;
}

async function taskOf(store: UiContext['deps']['store'], q: Question): Promise<Task> {
  const [run, session] = await Promise.all([store.getRun(q.runId), store.getSession(q.sessionId)]);
  const planId = run?.executesPlanId ?? run?.revisesPlanId ?? run?.planId ?? null;
  return { run, session, plan: planId ? await store.getPlan(planId) : null };
}

/** The task around a question: run, phase, session, workspace, plan, and the prompt the agent was given. */
function taskFacts(q: Question, t: Task) {
  const { run, session, plan } = t;
  const phase = !run
    ? ''
    : run.phase === 'execute'
      ? 'while carrying out'
      : run.revisesPlanId
        ? 'while revising'
        : 'while planning';
  return html`<dl class="facts task">
  <dt>Run</dt><dd><a href="${uiPath('runs', q.runId)}" class="question-run">${q.runId}</a>${run ? html` — ${statusTag('run', run.status)}` : ''}</dd>
  ${plan && html`<dt>Plan</dt><dd>${phase} <a href="${uiPath('plans', plan.id)}">${planTitle(plan.markdown)}</a> <span class="muted">(round ${plan.round})</span></dd>`}
  <dt>Session</dt><dd class="question-session">${session?.name ?? q.sessionId} <span class="muted">(${session?.workspace ?? 'unknown workspace'})</span></dd>
  ${run && html`<dt>Requested by</dt><dd>${run.requestedBy}</dd>`}
</dl>
${run && html`<p class="muted" id="prompt-h-${q.id}">The prompt the agent was given:</p><pre class="prompt question-prompt" aria-labelledby="prompt-h-${q.id}">${instructionsOf(run.prompt)}</pre>`}`;
}

function questionForm(
  c: Context<UiEnv>,
  q: Question,
  task: Task,
  canAnswer: boolean,
  error: string | undefined,
) {
  const questions = asked(q);
  return html`<section class="question" id="q-${q.id}" aria-labelledby="h-${q.id}">
<h2 id="h-${q.id}">Question from run <a href="${uiPath('runs', q.runId)}">${q.runId}</a></h2>
<p class="muted">Asked ${time(q.createdAt)}; expires ${time(q.expiresAt)}</p>
${taskFacts(q, task)}
${alertBox(error)}
<form method="post" action="/ui/questions/${encodeURIComponent(q.id)}/answer" class="answer">
  ${csrfField(c.get('csrf'))}
  ${questions.map(
    (x, i) => html`<fieldset>
    <legend>${headerTag(x.header)}${x.question}${x.multiSelect ? ' (choose one or more)' : ''}</legend>
    ${x.options.map((o, j) => {
      const id = `${q.id}-${i}-${j}`;
      return html`<div class="choice">
      <input type="${x.multiSelect ? 'checkbox' : 'radio'}" id="${id}" name="q${i}" value="${o.label}">
      <label for="${id}">${o.label}</label>${o.description && html` <span class="muted">— ${o.description}</span>`}
      ${o.preview && html`<pre class="preview">${o.preview}</pre>`}
    </div>`;
    })}
    ${
      !x.multiSelect &&
      html`<div class="choice">
      <input type="radio" id="${q.id}-${i}-other" name="q${i}" value="">
      <label for="${q.id}-${i}-other">Other: my own answer below</label>
    </div>`
    }
    <div class="own">
      <label for="${q.id}-${i}-text">${x.multiSelect ? 'Another answer of your own (optional)' : 'Your own answer (choose Other above)'}</label>
      <input type="text" id="${q.id}-${i}-text" name="q${i}-other" maxlength="${MAX_FREE_TEXT_CHARS}">
    </div>
  </fieldset>`,
  )}
  ${canAnswer && html`<button type="submit">Send answer</button>`}
</form>
</section>`;
}
