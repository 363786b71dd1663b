import { EXECUTE_MODES, OVERLAP_POLICIES } from '../../domain/types.js';
import type { BackfillResultJson, JobJson, SlotJson } from '../../http/contract/index.js';
import {
  choices,
  flag,
  helpLine,
  JSON_HELP,
  jsonOption,
  MCP_HELP,
  mcpOption,
  mcpOptions,
  nonBlank,
  oneOf,
  positiveInt,
  RemoteUsageError,
  required,
  SCHEDULE_HELP,
  scheduleOption,
  scheduleOptions,
  str,
  type Values,
} from './args.js';
import type { Group } from './group.js';
import { actionCommand, deleteCommand, nextPage, showCommand } from './listing.js';
import { clean, dash, fields, oneLine, out, printedJson, printListing } from './output.js';
import { idPath, queryString } from './request.js';
import { relative } from './times.js';

// drydock jobs list|show|create|update|delete|pause|resume|run|slots|backfill: cron jobs over /v1/jobs (every
// session's, and scheduled triggers') and /v1/sessions/:id/jobs (creating one).

/** The calendar date and wall clock of an instant in a time zone. */
function wallClock(t: Date, timeZone: string): { date: string; time: string; seconds: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(t)
      .map((p) => [p.type, p.value]),
  );
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    time: `${parts.hour}:${parts.minute}`,
    seconds: parts.second!,
  };
}

/**
 * An ISO time in the job's zone beside UTC: `2026-12-01 09:00 Europe/Berlin (08:00 UTC)`; the UTC date
 * too when it differs, seconds when they are not zero (a jittered time), the zone name left out when
 * `named` is false (a table with a zone column). '-' for null.
 */
export function zoned(iso: string | null, timeZone: string, named = true): string {
  if (iso === null) return '-';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const withSeconds = t.getUTCSeconds() !== 0;
  const clock = (w: ReturnType<typeof wallClock>) => (withSeconds ? `${w.time}:${w.seconds}` : w.time);
  const utc = wallClock(t, 'UTC');
  let local: ReturnType<typeof wallClock>;
  try {
    local = wallClock(t, timeZone);
  } catch {
    return `${utc.date} ${clock(utc)} UTC`; // a zone this machine does not know
  }
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return `${utc.date} ${clock(utc)} UTC`;
  const inUtc = local.date === utc.date ? clock(utc) : `${utc.date} ${clock(utc)}`;
  return `${local.date} ${clock(local)}${named ? ` ${timeZone}` : ''} (${inUtc} UTC)`;
}

const cronText = (j: JobJson): string =>
  j.cron === j.effective_cron ? j.cron : `${j.cron} → ${j.effective_cron}`;

/** A pair of opposite flags: true for `yes`, false for `no`, undefined for neither. */
function either(values: Values, yes: string, no: string): boolean | undefined {
  if (flag(values, yes) && flag(values, no)) throw new RemoteUsageError(`give --${yes} or --${no}, not both`);
  return flag(values, yes) ? true : flag(values, no) ? false : undefined;
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');

/** What `resume` prints about a job's next fire. */
function nextFire(j: JobJson): string {
  if (!j.next_fire_at) return 'no next fire';
  const jittered =
    j.next_fire_jittered_at && j.next_fire_jittered_at !== j.next_fire_at
      ? `, jittered to ${zoned(j.next_fire_jittered_at, j.timezone)}`
      : '';
  return `next fire ${zoned(j.next_fire_at, j.timezone)}${jittered} (${relative(j.next_fire_jittered_at ?? j.next_fire_at)})${j.next_fire_final ? ', the final one' : ''}`;
}

/** A time in the job's zone, then how far it is from now: `… (08:00 UTC), in 2h`. */
const zonedWhen = (iso: string | null, j: JobJson, now: number): string | null =>
  iso === null ? null : `${zoned(iso, j.timezone)}, ${relative(iso, now)}`;

/** The next fire times, one a line, the last marked when the job ends with it. */
function upcoming(j: JobJson): string {
  const times = j.next_fire_times ?? (j.next_fire_at ? [j.next_fire_at] : []);
  if (!times.length) return '  none';
  // Fewer than 3 from the API: the job ends with the last of them.
  const ends = j.next_fire_times ? times.length < 3 : j.next_fire_final === true;
  return times
    .map((t, i) => `  ${zoned(t, j.timezone)}${i === times.length - 1 && ends ? ' (the last)' : ''}`)
    .join('\n');
}

export const jobsGroup: Group = {
  name: 'jobs',
  summary:
    "Cron jobs: list them (across sessions, or a session's), read one, create, delete, pause, resume or run one now, and see what became of its slots.",
  commands: {
    list: {
      synopsis:
        '[--session ID] [--trigger ID] [--enabled|--paused] [--expiring-before TIME] [--limit N] [--cursor C] [--json]',
      help: `Lists jobs, oldest first: every session's jobs and every scheduled trigger's job, or those the
filters leave. Columns: id, session (when not filtered by one), cron (→ the effective cron when
--approximate moved it), time zone, recurring, status, next fire (nominal and jittered, in the job's zone
with UTC beside), expiry and the prompt.

${helpLine('--session ID', "only this session's jobs")}
${helpLine('--trigger ID', "only this scheduled trigger's job")}
${helpLine('--enabled', "only jobs that fire as things stand (active; a scheduled trigger's job")}
                        while its trigger is enabled)
${helpLine('--paused', 'only the others: paused, missed, or of a disabled trigger')}
  --expiring-before TIME
                        only jobs that expire before TIME (ISO-8601, e.g. 2026-12-24T00:00:00Z); jobs
                        that never expire are left out
${helpLine('--limit N', 'at most N (API default 50, max 200)')}
${helpLine('--cursor C', 'the next page (from a previous listing)')}
${JSON_HELP}`,
      options: {
        session: { type: 'string' },
        trigger: { type: 'string' },
        enabled: { type: 'boolean' },
        paused: { type: 'boolean' },
        'expiring-before': { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        ...jsonOption,
      },
      positionals: [],
      async run({ client, values, command }) {
        if (flag(values, 'enabled') && flag(values, 'paused')) {
          throw new RemoteUsageError('--enabled and --paused exclude each other: give one of them');
        }
        const session = nonBlank(values, 'session');
        const enabled = flag(values, 'enabled') ? 'true' : flag(values, 'paused') ? 'false' : undefined;
        const query = queryString({
          session_id: session,
          trigger_id: nonBlank(values, 'trigger'),
          enabled,
          expiring_before: nonBlank(values, 'expiring-before'),
          limit: positiveInt(values, 'limit'),
          cursor: str(values, 'cursor'),
        });
        const res = await client.request('GET', `/v1/jobs${query}`);
        // One session's list needs no session column: its table reads as it did before the cross-session list.
        const bySession = session === undefined;
        printListing<JobJson, { items: JobJson[]; next_cursor: string | null }>(values, res, {
          empty: 'no jobs',
          headers: [
            'ID',
            ...(bySession ? ['SESSION'] : []),
            'CRON',
            'TZ',
            'RECURRING',
            'STATUS',
            'NEXT_FIRE',
            'JITTERED',
            'EXPIRES',
            'PROMPT',
          ],
          row: (j, now) => [
            j.id,
            ...(bySession ? [j.trigger_id ? `${j.session_id} (trigger ${j.trigger_id})` : j.session_id] : []),
            cronText(j),
            j.timezone,
            yesNo(j.recurring),
            j.status,
            `${zoned(j.next_fire_at, j.timezone, false)}${j.next_fire_final ? ' (final)' : ''}`,
            zoned(j.next_fire_jittered_at, j.timezone, false),
            relative(j.expires_at, now),
            oneLine(j.prompt, 40),
          ],
          more: (body) =>
            body.next_cursor
              ? nextPage(
                  command,
                  values,
                  ['session', 'trigger', 'enabled', 'paused', 'expiring-before', 'limit'],
                  ['cursor', body.next_cursor],
                )
              : null,
        });
      },
    },

    show: showCommand<JobJson>({
      about: `Shows one job: its schedule, next fire (nominal and jittered) and the next 3 fire times, expiry,
pending slot, fire count, run options and prompt. Times are in the job's zone with UTC beside them.`,
      path: (id) => `/v1/jobs/${idPath(id)}`,
      render(j, now) {
        const options = Object.keys(j.options ?? {}).length ? JSON.stringify(j.options) : null;
        return `${fields([
          ['job', j.id],
          ['name', j.name],
          ['session', j.session_id],
          ['status', j.status],
          ['cron', j.cron],
          ['effective_cron', j.effective_cron],
          ['timezone', j.timezone],
          ['recurring', yesNo(j.recurring)],
          ['approximate', yesNo(j.approximate)],
          ['overlap', j.overlap],
          ['jitter_max', j.jitter.max_seconds === null ? "the daemon's cap" : `${j.jitter.max_seconds} s`],
          ['next_fire', zonedWhen(j.next_fire_at, j, now)],
          ['next_fire_jittered', zonedWhen(j.next_fire_jittered_at, j, now)],
          ['next_fire_final', j.next_fire_final === null ? null : yesNo(j.next_fire_final)],
          ['expires', zonedWhen(j.expires_at, j, now)],
          [
            'renewed',
            j.renewals
              ? `${j.renewals} time(s), last ${zonedWhen(j.renewed_at ?? null, j, now)} by ${j.renewed_by}`
              : null,
          ],
          [
            'trigger',
            j.trigger_id
              ? `${j.trigger_id} (a scheduled trigger's job: change it through the trigger)`
              : null,
          ],
          [
            'pending_slot',
            j.pending_slot_at
              ? `${zoned(j.pending_slot_at, j.timezone)} (${j.pending_coalesced} slot(s) waiting for the session to be idle)`
              : null,
          ],
          [
            'buffered',
            j.buffered_slots.length ? `${j.buffered_slots.length} more slot(s) waiting their turn` : null,
          ],
          ['last_slot', zonedWhen(j.last_slot_at, j, now)],
          ['fire_count', j.fire_count],
          ['options', options],
          ['created_by', j.created_by],
          ['created', zonedWhen(j.created_at, j, now)],
        ])}\n\nnext fires:\n${upcoming(j)}\n\nprompt:\n${clean(j.prompt).trimEnd()}`;
      },
    }),

    create: {
      synopsis:
        '--session ID --cron EXPR --prompt TEXT [--name N] [--timezone TZ] [--one-shot] [--approximate] [--overlap P] [--jitter-max-seconds N] [--execute-mode M] [--mcp NAME ... | --no-mcp] [--json]',
      help: `Creates a cron job in a session and prints its id.

  --session ID          the session (required)
  --cron EXPR           5 fields "minute hour day-of-month month day-of-week" (names JAN-DEC and
                        SUN-SAT allowed), or @hourly, @daily, @midnight, @weekly, @monthly, @yearly,
                        @annually (required)
  --prompt TEXT         what the run is asked to plan (required)
  --name N              a name, unique within the session (a second job of the name is refused);
                        'drydock apply' manages named jobs only (default: none)
  --timezone TZ         an IANA time zone, e.g. Europe/Berlin (default: the daemon's)
  --one-shot            fire once, then delete the job (default: recurring, expiring after 7 days;
                        renew it with 'drydock jobs renew', or keep a schedule for good as a scheduled
                        trigger: 'drydock triggers create --kind schedule')
  --approximate         move a minute of exactly 0 or 30 forward 1-6 minutes, so that many jobs do not
                        start in the same second
${SCHEDULE_HELP}
  --execute-mode M      ${choices(EXECUTE_MODES)}: what the execute phase may do without asking
                        (default: the session's)
${MCP_HELP}
                        (default: the session's servers)
  --json                print the API's JSON body instead of the id`,
      options: {
        session: { type: 'string' },
        cron: { type: 'string' },
        prompt: { type: 'string' },
        name: { type: 'string' },
        timezone: { type: 'string' },
        'one-shot': { type: 'boolean' },
        approximate: { type: 'boolean' },
        ...scheduleOptions,
        'execute-mode': { type: 'string' },
        ...mcpOptions,
        ...jsonOption,
      },
      positionals: [],
      async run({ client, values }) {
        const session = required(values, 'session', "jobs belong to a session (see 'drydock sessions list')");
        const cron = required(values, 'cron', 'when the job fires, e.g. "0 9 * * 1-5"');
        const prompt = required(values, 'prompt', 'what the run is asked to plan');
        const timezone = nonBlank(values, 'timezone');
        const executeMode = oneOf(values, 'execute-mode', EXECUTE_MODES);
        const mcp = mcpOption(values);
        const given = { ...(executeMode ? { execute_mode: executeMode } : {}), ...(mcp ? { mcp } : {}) };
        const res = await client.request('POST', `/v1/sessions/${idPath(session)}/jobs`, {
          name: nonBlank(values, 'name'),
          cron,
          prompt,
          timezone,
          recurring: !flag(values, 'one-shot'),
          approximate: flag(values, 'approximate'),
          ...scheduleOption(values, OVERLAP_POLICIES),
          options: Object.keys(given).length ? given : undefined,
        });
        if (printedJson(values, res.text)) return;
        const j = res.body as JobJson;
        out(j.id);
        // The id alone on stdout (scripts read it); the expiry and how to renew on stderr.
        if (j.expires_at) {
          process.stderr.write(
            `job ${j.id} expires ${zoned(j.expires_at, j.timezone)}; keep it with: drydock jobs renew ${j.id}\n`,
          );
        }
      },
    },

    update: {
      synopsis:
        'ID [--cron EXPR] [--prompt TEXT] [--timezone TZ] [--recurring | --one-shot] [--approximate | --exact] [--overlap P] [--jitter-max-seconds N|none] [--json]',
      help: `Changes a session's job: the options given replace the job's, and the job is planned anew from
now (its next fire and, for a recurring job, a new expiry period). It keeps its name, its status (a paused
job stays paused) and its history. A scheduled trigger's job is changed through its trigger.

  --cron EXPR           when it fires (as for 'jobs create')
  --prompt TEXT         what the run is asked to plan
  --timezone TZ         an IANA time zone
  --recurring, --one-shot   fire on every match, or once
  --approximate, --exact    move a minute of 0 or 30 forward 1-6 minutes, or not
${SCHEDULE_HELP}
${JSON_HELP}`,
      options: {
        cron: { type: 'string' },
        prompt: { type: 'string' },
        timezone: { type: 'string' },
        recurring: { type: 'boolean' },
        'one-shot': { type: 'boolean' },
        approximate: { type: 'boolean' },
        exact: { type: 'boolean' },
        ...scheduleOptions,
        ...jsonOption,
      },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await client.request('PATCH', `/v1/jobs/${idPath(args[0]!)}`, {
          cron: nonBlank(values, 'cron'),
          prompt: nonBlank(values, 'prompt'),
          timezone: nonBlank(values, 'timezone'),
          recurring: either(values, 'recurring', 'one-shot'),
          approximate: either(values, 'approximate', 'exact'),
          ...scheduleOption(values, OVERLAP_POLICIES),
        });
        if (printedJson(values, res.text)) return;
        const j = res.body as JobJson;
        out(`job ${j.id} updated; ${nextFire(j)}`);
      },
    },

    renew: actionCommand<JobJson>('POST', {
      about: `Renews a recurring job: it expires another expiry period (scheduler.recurring_expiry_ms, 7 days by
default) from now. Recorded on the job (renewals, renewed_at, renewed_by). A schedule meant to last
is better kept as a scheduled trigger ('drydock triggers create --kind schedule'), which never expires.`,
      path: (id) => `/v1/jobs/${idPath(id)}/renew`,
      render: (j) => `job ${j.id} renewed: expires ${zoned(j.expires_at!, j.timezone)}; ${nextFire(j)}`,
    }),

    delete: deleteCommand({
      about: 'Deletes a job: it fires no more. Its runs and slot history stay.',
      noun: 'job',
      path: (id) => `/v1/jobs/${idPath(id)}`,
    }),

    pause: actionCommand<JobJson>('POST', {
      about: 'Pauses a job: it stops firing until resumed.',
      path: (id) => `/v1/jobs/${idPath(id)}/pause`,
      render: (j) => `job ${j.id} ${j.status}`,
    }),

    resume: actionCommand<JobJson>('POST', {
      about: `Resumes a paused job. A recurring job's next slot is computed from now (slots that passed while
it was paused are skipped); a one-shot whose time passed becomes missed and waits for 'drydock jobs run'.`,
      path: (id) => `/v1/jobs/${idPath(id)}/resume`,
      render: (j) => `job ${j.id} ${j.status}; ${nextFire(j)}`,
    }),

    run: actionCommand<{ id: string }>('POST', {
      about: `Runs a job now and prints the new run's id. For a missed one-shot this fires its slot and deletes
the job.`,
      jsonHelp: helpLine('--json', "print the API's JSON body (the run) instead of its id"),
      path: (id) => `/v1/jobs/${idPath(id)}/run`,
      render: (r) => r.id,
    }),

    backfill: {
      synopsis: 'ID --from TIME --to TIME [--json]',
      help: `Fires the job's slots in [--from, --to) once each, as if each came due now: the job's overlap policy
applies (under skip only the first fires while the session is busy; under buffer_all they wait their
turn). A slot that has a run or an outcome already is not fired again (already_done). At most
scheduler.max_backfill_slots slots (100 by default); a longer range is refused.

  --from TIME           the range's start, an ISO time, e.g. 2026-12-01T00:00:00Z (required)
  --to TIME             the range's end (not included), at most now (required)
${JSON_HELP}`,
      options: { from: { type: 'string' }, to: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const from = required(values, 'from', 'the start of the range, e.g. 2026-12-01T00:00:00Z');
        const to = required(values, 'to', 'the end of the range (not included), e.g. 2026-12-02T00:00:00Z');
        const res = await client.request('POST', `/v1/jobs/${idPath(args[0]!)}/backfill`, { from, to });
        if (printedJson(values, res.text)) return;
        const result = res.body as BackfillResultJson;
        if (!result.items.length) {
          out('no slots in that range');
          return;
        }
        for (const s of result.items) out(`${s.slot_at}  ${s.outcome}${s.run_id ? `  ${s.run_id}` : ''}`);
      },
    },

    slots: {
      synopsis: 'ID [--json]',
      help: `Shows what became of each of a job's slots (nominal fire times, in the job's zone with UTC
beside): fired (with its run), coalesced into a later fire's run, or missed (a range, while the daemon
was down).

${JSON_HELP}`,
      options: { ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await client.request('GET', `/v1/jobs/${idPath(args[0]!)}/slots`);
        // The job's zone, to show the slots in; UTC alone if the job cannot be read.
        const zone = flag(values, 'json')
          ? 'UTC'
          : await client
              .request('GET', `/v1/jobs/${idPath(args[0]!)}`)
              .then((r) => (r.body as JobJson).timezone)
              .catch(() => 'UTC');
        const at = (iso: string | null) => zoned(iso, zone);
        printListing<SlotJson>(values, res, {
          empty: 'no slots recorded yet',
          headers: ['SLOT', 'OUTCOME', 'SLOTS', 'RUN', 'RECORDED'],
          row: (s) => [
            s.last_slot_at && s.last_slot_at !== s.slot_at
              ? `${at(s.slot_at)} … ${at(s.last_slot_at)}`
              : at(s.slot_at),
            s.outcome,
            String(s.slots),
            dash(s.run_id),
            at(s.recorded_at),
          ],
        });
      },
    },
  },
};
