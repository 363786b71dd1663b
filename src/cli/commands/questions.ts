import { shortHeader } from '../../domain/questions.js';
import type { QuestionJson } from '../../http/contract/index.js';
import { JSON_HELP, jsonOption, RemoteUsageError, strs } from './args.js';
import type { Group } from './group.js';
import { choiceFilter, idFilter, limitFilter, listCommand, showCommand } from './listing.js';
import { clean, oneLine, out, printAnswer } from './output.js';
import { idPath } from './request.js';
import { age, relative } from './times.js';

// drydock questions list|show|answer: what agents asked (AskUserQuestion) over /v1/questions.

const STATUSES = ['pending', 'answered', 'timed_out', 'canceled'] as const;

/** One question as the model asked it. */
type Asked = QuestionJson['questions'][number];

/** Most lines of an option's preview shown by list and show. */
const PREVIEW_LINES = 12;

/** An option's preview (a mockup or code snippet), indented under it and cut to a few lines. */
function previewLines(preview: unknown): string[] {
  if (typeof preview !== 'string' || preview.trim() === '') return [];
  const all = clean(preview).replace(/\s+$/, '').split('\n');
  const shown = all
    .slice(0, PREVIEW_LINES)
    .map((l) => `         | ${l.length > 200 ? `${l.slice(0, 199)}…` : l}`);
  if (all.length > PREVIEW_LINES) shown.push(`         | … ${all.length - PREVIEW_LINES} more lines`);
  return shown;
}

const askedOf = (q: QuestionJson): Asked[] => (Array.isArray(q.questions) ? q.questions : []);

function render(q: QuestionJson, now: number): string {
  const head = [
    q.id,
    q.status,
    `run ${q.run_id}`,
    `asked ${age(q.created_at, now)} ago`,
    q.status === 'pending'
      ? `expires ${relative(q.expires_at, now)}`
      : `resolved ${relative(q.resolved_at, now)}`,
  ].join('  ');
  const lines = [head];
  askedOf(q).forEach((a, i) => {
    const how = a.multiSelect ? 'choose any, separated by |' : 'choose one';
    lines.push(`  ${i + 1}. [${shortHeader(oneLine(a.header, 200))}] ${oneLine(a.question, 300)} (${how})`);
    for (const o of a.options) {
      lines.push(
        `       - ${oneLine(o.label, 200)}${o.description ? `: ${oneLine(o.description, 300)}` : ''}`,
      );
      lines.push(...previewLines(o.preview));
    }
    if (q.status === 'pending') lines.push('       - or an answer of your own');
  });
  if (q.answers) {
    lines.push(`  answered by ${q.answered_by ?? '-'}:`);
    for (const [text, answer] of Object.entries(q.answers)) {
      lines.push(
        `    ${oneLine(text, 200)} = ${oneLine(Array.isArray(answer) ? answer.join(' | ') : answer, 300)}`,
      );
    }
  }
  return lines.map(clean).join('\n');
}

/**
 * Turns `--answer KEY=VALUE` strings into the API's answers, keyed by question text. KEY is the question
 * text, its header, or its number (1-based). VALUE is an option label or one's own text; a multiSelect
 * VALUE separates labels (and at most one text of one's own) with `|`.
 */
function parseAnswers(asked: Asked[], raw: string[]): Record<string, string | string[]> {
  if (!raw.length) throw new RemoteUsageError('give at least one --answer "Question text=Label"');
  const answers: Record<string, string | string[]> = {};
  const known = asked.map((a, i) => `${i + 1}. ${JSON.stringify(a.question)} [${a.header}]`).join(', ');
  for (const entry of raw) {
    // The longest question text that prefixes the entry wins (question texts may contain '=').
    let target = asked
      .filter((a) => entry.startsWith(`${a.question}=`))
      .sort((x, y) => y.question.length - x.question.length)[0];
    let value = target ? entry.slice(target.question.length + 1) : '';
    if (!target) {
      const eq = entry.indexOf('=');
      if (eq < 0) throw new RemoteUsageError(`--answer takes "Question=Label", got ${JSON.stringify(entry)}`);
      const key = entry.slice(0, eq).trim();
      value = entry.slice(eq + 1);
      const byHeader = asked.filter((a) => a.header.toLowerCase() === key.toLowerCase());
      target =
        byHeader.length === 1 ? byHeader[0] : /^[1-9][0-9]*$/.test(key) ? asked[Number(key) - 1] : undefined;
      if (!target) {
        throw new RemoteUsageError(
          `--answer ${JSON.stringify(key)} names no question of this request; questions: ${known || 'none'}`,
        );
      }
    }
    if (Object.hasOwn(answers, target.question)) {
      throw new RemoteUsageError(`question ${JSON.stringify(target.question)} is answered twice`);
    }
    const labels = new Set(target.options.map((o) => o.label));
    if (target.multiSelect) {
      answers[target.question] = labels.has(value.trim())
        ? [value.trim()]
        : value
            .split('|')
            .map((l) => l.trim())
            .filter((l) => l);
    } else {
      answers[target.question] = value.trim();
    }
  }
  return answers;
}

export const questionsGroup: Group = {
  name: 'questions',
  summary: 'Questions agents asked while planning: list them, read one, answer one to resume its run.',
  commands: {
    list: listCommand<QuestionJson>({
      about: 'Lists questions with their options and answers.',
      filters: [
        choiceFilter('status', 'S', STATUSES, '(default: all)'),
        idFilter('run', "only this run's questions"),
        limitFilter(),
      ],
      path: '/v1/questions',
      show: {
        print(_ctx, { items }) {
          const now = Date.now();
          out(items.length ? items.map((item) => render(item, now)).join('\n\n') : 'no questions');
        },
      },
    }),

    show: showCommand<QuestionJson>({
      about: 'Shows one question request: its questions, options, status and answers.',
      path: (id) => `/v1/questions/${idPath(id)}`,
      render,
    }),

    answer: {
      synopsis: 'ID --answer "Question=Label" [--answer ...] [--json]',
      help: `Answers a pending question request (every question in it); its run then resumes.

  --answer Q=LABEL      one per question; Q is the question text, its header or its number (1, 2, ...);
                        LABEL is one of the options or an answer in your own words;
                        for a multiSelect question give several labels separated by |, e.g. "Tests=Unit|E2E",
                        and at most one answer of your own among them
${JSON_HELP}`,
      options: { answer: { type: 'string', multiple: true }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const raw = strs(values, 'answer');
        if (!raw.length) throw new RemoteUsageError('--answer is required: give one per question');
        const path = `/v1/questions/${idPath(args[0]!)}`;
        const current = (await client.request('GET', path)).body as QuestionJson;
        const answers = parseAnswers(askedOf(current), raw);
        const res = await client.request('POST', `${path}/answers`, { answers });
        printAnswer<QuestionJson>(
          values,
          res,
          (q) => `question ${q.id} ${q.status}, by ${q.answered_by ?? '-'} (run ${q.run_id})`,
        );
      },
    },
  },
};
