import { createHash } from 'node:crypto';
import { jitterFraction } from '../../src/scheduler/jitter.js';
import { mulberry32 } from '../../tests/support/prng.js';

// The job mix, shared by the seeding child (drydock's store) and the baseline child (croner instances), so
// both systems hold the same expressions in the same zones. Everything is a pure function of the job index
// (and, for the due set, of the due minute): no randomness, no clock.

export const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Tokyo'] as const;

export interface JobShape {
  cron: string;
  timezone: string;
  approximate: boolean;
}

/** Ids that look like drydock's (`job_` + 16 base64url chars) but are reproducible from the index. */
export function benchId(prefix: 'ses' | 'job', index: number): string {
  const digest = createHash('sha256').update(`drydock-bench:${prefix}:${index}`).digest();
  return `${prefix}_${digest.subarray(0, 12).toString('base64url')}`;
}

/** Job i belongs to session i mod sessions, so the due set (the lowest indices) is spread over every session. */
export function sessionIndexOf(jobIndex: number, sessions: number): number {
  return jobIndex % sessions;
}

/** A small deterministic generator (mulberry32) seeded from the job index and the attempt. */
class Rand {
  readonly next: () => number;

  constructor(index: number, attempt: number) {
    this.next = mulberry32((Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(attempt + 1, 0x85ebca77)) >>> 0);
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/**
 * Recurring schedules people actually ask for: hourly, every few hours, daily, weekdays, weekly, monthly,
 * twice a day, "around 9" (approximate, minute 0 or 30) and nicknames. No sub-hourly ones: the background
 * jobs must stay quiet for the whole benchmark, and an every-15-minutes job cannot.
 */
const BACKGROUND: readonly ((r: Rand) => Omit<JobShape, 'timezone'>)[] = [
  (r) => ({ cron: `${r.int(60)} * * * *`, approximate: false }),
  (r) => ({ cron: `${r.int(60)} */${r.pick([2, 3, 4, 6, 8, 12])} * * *`, approximate: false }),
  (r) => ({ cron: `${r.int(60)} ${r.int(24)} * * *`, approximate: false }),
  (r) => ({ cron: `${r.int(60)} ${r.int(24)} * * 1-5`, approximate: false }),
  (r) => ({ cron: `${r.int(60)} ${r.int(24)} * * ${r.int(7)}`, approximate: false }),
  (r) => ({ cron: `${r.int(60)} ${r.int(24)} ${1 + r.int(28)} * *`, approximate: false }),
  (r) => {
    const h = r.int(12);
    return { cron: `${r.int(60)} ${h},${h + 12} * * *`, approximate: false };
  },
  (r) => ({ cron: `0 ${r.int(24)} * * *`, approximate: true }),
  (r) => ({ cron: `30 ${r.int(24)} * * 1-5`, approximate: true }),
  (r) => ({ cron: r.pick(['@daily', '@weekly', '@monthly']), approximate: false }),
];

/**
 * Candidate schedule for background job `index`. The seeder rejects a candidate whose first slot falls
 * inside the benchmark's horizon and asks again with the next `attempt`.
 */
export function backgroundCandidate(index: number, attempt: number): JobShape {
  const r = new Rand(index, attempt);
  const shape = BACKGROUND[(index + attempt) % BACKGROUND.length]!(r);
  return { ...shape, timezone: ZONES[r.int(ZONES.length)]! };
}

interface LocalFields {
  minute: number;
  hour: number;
  day: number;
  weekday: number;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const formats = new Map<string, Intl.DateTimeFormat>();

function localFields(at: number, timeZone: string): LocalFields {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      minute: 'numeric',
      hour: 'numeric',
      day: 'numeric',
      weekday: 'short',
    });
    formats.set(timeZone, format);
  }
  const parts = new Map(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  return {
    minute: Number(parts.get('minute')),
    hour: Number(parts.get('hour')),
    day: Number(parts.get('day')),
    weekday: WEEKDAYS.indexOf(parts.get('weekday') ?? ''),
  };
}

/** Schedules whose next slot is exactly `at` (a minute boundary), written in the job's own zone. */
const DUE: readonly ((f: LocalFields) => string)[] = [
  (f) => `${f.minute} ${f.hour} * * *`,
  (f) => `${f.minute} * * * *`,
  (f) => `${f.minute} ${f.hour} * * ${f.weekday}`,
  (f) => `${f.minute} ${f.hour} ${f.day} * *`,
  (f) => {
    const [a, b] = [f.hour % 12, (f.hour % 12) + 12];
    return `${f.minute} ${a},${b} * * *`;
  },
];

/** Due job `index`: a recurring schedule whose next nominal slot is the minute starting at `minuteAt`. */
export function dueShape(index: number, minuteAt: number): JobShape {
  const timezone = ZONES[index % ZONES.length]!;
  const template = DUE[Math.floor(index / ZONES.length) % DUE.length]!;
  return { cron: template(localFields(minuteAt, timezone)), timezone, approximate: false };
}

/**
 * Where inside the due minute a due job's jittered due time lies: the job's own jitter fraction (first 32
 * bits of sha256(id), what drydock uses) spread over the first `spreadMs` of the minute (60 s by default),
 * so the due times are uniform and reproducible. A spread of 0 puts them all on the minute (jitter off).
 */
export function dueOffsetMs(jobId: string, spreadMs: number): number {
  return Math.floor(jitterFraction(jobId) * spreadMs);
}

export function ceilMinute(at: number): number {
  return Math.ceil(at / 60_000) * 60_000;
}
