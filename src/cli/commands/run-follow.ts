import type { RunEventMap, RunEventType } from '../../domain/events.js';
import { NOTIFICATION_TITLE } from '../../domain/plan-title.js';
import { isFinishedRunStatus, isSucceededRunStatus } from '../../domain/types.js';
import { followEvents, StreamLostError } from '../event-stream.js';
import { jsonOption } from './args.js';
import type { Subcommand } from './group.js';
import { clean, oneLine, out, terminalPlanTitle } from './output.js';
import { idPath } from './request.js';

// drydock runs follow ID: a run's event log as it happens, one line per event (the model's text and thinking
// as the lines they make up), across dropped connections, until the run ends.

/** A presented run event: `{seq, type, at, ...data}`. */
type EventJson = { seq: number; type: string; at: string } & Record<string, unknown>;

/**
 * An event of a type RunEventMap names, as a daemon sends it. The daemon may be older or newer than this
 * command, so any payload field may be missing (printed as '-'); a type the map does not name is printed
 * generically.
 */
type SentEvent = {
  [K in RunEventType]: { seq: number; type: K; at: string } & Partial<RunEventMap[K]>;
}[RunEventType];

const usd = (v: unknown): string => (typeof v === 'number' ? `$${v.toFixed(4)}` : '$?');
const seconds = (ms: unknown): string => (typeof ms === 'number' ? `${(ms / 1000).toFixed(1)} s` : '? s');
const s = (v: unknown): string => (v === null || v === undefined ? '-' : oneLine(String(v), 200));

/** A tool's input in one line: `file_path=src/app.ts, limit=20` (each value cut short). */
export function summarizeInput(input: unknown, max = 160): string {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return oneLine(JSON.stringify(input) ?? '', max);
  }
  const parts = Object.entries(input as Record<string, unknown>).map(
    ([k, v]) => `${k}=${oneLine(typeof v === 'string' ? v : JSON.stringify(v), 60)}`,
  );
  return oneLine(parts.join(', '), max);
}

/**
 * Writes events as lines. Text and thinking come as deltas: they are written as they come, each line of
 * them prefixed, and a line they leave open is ended before anything else is printed.
 */
export class EventPrinter {
  /** What the line being written is made of, while it has no newline yet. */
  private open: 'text' | 'thinking' | null = null;

  constructor(private readonly write: (text: string) => void) {}

  print(e: EventJson): void {
    if (e.type === 'text_delta' || e.type === 'thinking_delta') {
      this.delta(e.type === 'text_delta' ? 'text' : 'thinking', typeof e.text === 'string' ? e.text : '');
      return;
    }
    this.flush();
    const line = describeEvent(e);
    if (line !== null) this.write(`${line}\n`);
  }

  /** Ends a line left open by deltas. */
  flush(): void {
    if (this.open) this.write('\n');
    this.open = null;
  }

  private delta(kind: 'text' | 'thinking', text: string): void {
    if (this.open && this.open !== kind) this.flush();
    clean(text)
      .split('\n')
      .forEach((part, i) => {
        if (i > 0) {
          this.write('\n');
          this.open = null;
        }
        if (part === '') return;
        if (!this.open) this.write(kind === 'thinking' ? '  thinking │ ' : '  │ ');
        this.open = kind;
        this.write(part);
      });
  }
}

/** One line for an event other than a delta (null: nothing worth a line). */
export function describeEvent(sent: EventJson): string | null {
  const e = sent as SentEvent;
  switch (e.type) {
    case 'run_started':
    case 'run_resumed': {
      // Only run_started names the thinking and effort sent.
      const started = e.type === 'run_started' ? e : null;
      const thinking =
        started?.thinking && typeof started.thinking === 'object'
          ? `, thinking ${s(started.thinking.type ?? JSON.stringify(started.thinking))}`
          : '';
      const effort = started?.effort ? `, effort ${s(started.effort)}` : '';
      const verb = e.type === 'run_started' ? 'started' : 'resumed';
      return `• run ${verb}: ${s(e.phase)} phase, model ${s(e.model)}${thinking}${effort}, attempt ${s(e.attempt)}`;
    }
    case 'tool_use':
      return `• tool ${s(e.tool)}: ${summarizeInput(e.input)}`;
    case 'tool_result':
      return `  ↳ ${s(e.tool)} ${e.is_error ? 'failed' : 'done'} (${s(e.chars)} chars${e.truncated ? ', truncated' : ''})`;
    case 'tool_interrupted':
      return `  ↳ ${s(e.tool)} was interrupted by a restart and is not run again`;
    case 'tool_call_cut_off':
      return `  ↳ ${s(e.tool)} call cut off at max_tokens; not run`;
    case 'policy_violation':
      return `• refused: ${s(e.tool)} is not allowed in the ${s(e.phase)} phase${e.reason ? ` (${s(e.reason)})` : ''}`;
    case 'tool_approval_request':
      return (
        `• approval needed (${s(e.tool_approval_id)}): ${s(e.tool)} ${summarizeInput(e.input, 120)}` +
        ` — drydock tool-approvals decide ${s(e.tool_approval_id)} --allow|--deny`
      );
    case 'tool_approval_resolved':
      return `• tool approval ${s(e.tool_approval_id)} ${s(e.decision)}${e.by ? ` by ${s(e.by)}` : ''}${e.message ? `: ${s(e.message)}` : ''}`;
    case 'question_request': {
      const qs = Array.isArray(e.questions) ? e.questions : [];
      const text = qs
        .map((q) => `${s(q.question)} (${(q.options ?? []).map((o) => s(o.label)).join(' | ')})`)
        .join('; ');
      return `• question ${s(e.question_id)}: ${text} — drydock questions answer ${s(e.question_id)} --answer "Question=Label"`;
    }
    case 'question_resolved':
      return `• question ${s(e.question_id)} ${e.reason === 'answered' ? `answered${e.by ? ` by ${s(e.by)}` : ''}` : s(e.reason)}`;
    case 'plan_proposed': {
      const title = typeof e.markdown === 'string' ? terminalPlanTitle(e.markdown, NOTIFICATION_TITLE) : '';
      const sha = typeof e.sha256 === 'string' ? e.sha256.slice(0, 12) : '-';
      return `• plan proposed: ${s(e.plan_id)} (round ${s(e.round)}, sha256 ${sha}) ${title} — drydock plans show ${s(e.plan_id)}`;
    }
    case 'plan_decided':
      return `• plan ${s(e.plan_id)}: ${s(e.decision)} by ${s(e.identity)}, now ${s(e.plan_status)}${e.run_id ? `; run ${s(e.run_id)}` : ''}`;
    case 'plan_closed':
      return `• plan ${s(e.plan_id)}: ${s(e.plan_status)} before anyone decided`;
    case 'mode_fallback':
      return `• execute mode ${s(e.from)} fell back to ${s(e.to)}: ${s(e.reason)}`;
    case 'execution_recorded':
      return `• execution recorded: commit ${s(e.commit)}${e.branch ? ` on ${s(e.branch)}` : ''}, ${Array.isArray(e.changed_files) ? e.changed_files.length : 0} file(s) changed`;
    case 'model_retry':
      return `• model retry: attempt ${s(e.attempt)} failed (${s(e.cause)}); next in ${seconds(e.next_attempt_in_ms)}${e.partial_reply_discarded ? ', partial reply discarded' : ''}`;
    case 'spend_limit_reached':
      return `• waiting on the spend limit: ${s(e.reason)}; resumes by ${s(e.resumes_at)} (or \`drydock runs resume\`)`;
    case 'spend_limit_resumed':
      return `• resumed after the spend limit by ${s(e.by)}`;
    case 'spend_cap_reached':
      return `• waiting on a spend cap: ${s(e.reason)} (or \`drydock runs resume\` once the cap is raised)`;
    case 'spend_cap_resumed':
      return `• resumed after a spend cap by ${s(e.by)}`;
    case 'turn_finished':
      return `• turn ${s(e.turn)} finished: ${s(e.stop_reason)}, ${usd(e.cost_usd)}`;
    case 'run_interrupted':
      return `• run interrupted by a restart${e.retrying ? `; retrying (attempt ${s(e.attempt)})` : ''}`;
    case 'run_finished':
      return (
        `• run finished: ${s(e.status)}, ${s(e.turns)} turn(s), ${usd(e.cost_usd)}, ${seconds(e.duration_ms)}` +
        `${e.plan_id ? `, plan ${s(e.plan_id)}` : ''}${e.error ? `\n  error: ${s(e.error)}` : ''}`
      );
    default: {
      const { seq: _seq, type, at: _at, ...data } = sent;
      return `• ${s(type)}${Object.keys(data).length ? `: ${summarizeInput(data)}` : ''}`;
    }
  }
}

export const followCommand: Subcommand = {
  synopsis: 'ID [--json]',
  help: `Follows a run's events as they happen, one line each (the model's text and thinking as the lines it
writes; tool calls with their input; questions, approvals and plans with the command that answers them;
retries; each turn with its stop reason and cost), until the run ends. A dropped connection is resumed
where it stopped (Last-Event-ID). Exits 0 when the run ends planned or completed, 1 for any other end.

  --json                print each event as the API sends it, one JSON object per line`,
  options: { ...jsonOption },
  positionals: ['ID'],
  async run({ client, values, args }) {
    const id = args[0]!;
    const json = values.json === true;
    const printer = new EventPrinter((text) => process.stdout.write(text));
    let status: string | null = null;
    let receipt = false;
    const ended = async () => {
      const res = await client.request('GET', `/v1/runs/${idPath(id)}`);
      const run = res.body as { status: string };
      if (!isFinishedRunStatus(run.status)) return false;
      status = run.status;
      return true;
    };
    try {
      for await (const e of followEvents(client, `/v1/runs/${idPath(id)}/events`, {
        last: 'run_finished',
        ended,
        // A line the deltas left open goes on after the reconnect: the daemon resumes right after it.
        onReconnect: (lastId, reason) => {
          process.stderr.write(`drydock: ${reason}; reconnecting after event ${lastId ?? '(none)'}\n`);
        },
      })) {
        const event = JSON.parse(e.data) as EventJson;
        if (json) out(e.data);
        else printer.print(event);
        if (event.type === 'run_finished') {
          receipt = true;
          status = typeof event.status === 'string' ? event.status : null;
        }
      }
    } catch (err) {
      if (!(err instanceof StreamLostError)) throw err;
      printer.flush();
      process.stderr.write(`drydock: ${err.message}\n`);
      return 1;
    }
    printer.flush();
    // A run that ended without its receipt (one older than receipts) still says how it ended.
    if (!json && !receipt && status !== null) out(`• run ended: ${status} (no run_finished event recorded)`);
    return status !== null && isSucceededRunStatus(status) ? 0 : 1;
  },
};
