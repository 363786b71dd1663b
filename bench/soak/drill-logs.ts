import { readFileSync } from 'node:fs';

// A replica's log (pino JSON lines, `time` in ISO-8601) over a window of time: how many warnings and errors
// it wrote then, and which. The outage drills count them per replica from the fault to the runs' end.

/** The message a request answered 503 logs (src/http/errors.ts). */
export const UNAVAILABLE_503 = 'database unreachable; answered 503';
/** The message of a run whose end could not be written (src/runs/queue.ts). */
export const BOOKKEEPING_FAILED = 'run bookkeeping failed';

export interface LogWindow {
  /** Lines at level >= 40 (warn, error, fatal). */
  atLeastWarn: number;
  errors: number;
  /** Lines at level >= 40 by message. */
  byMessage: Map<string, number>;
  /** Every line (any level) by message: 'run taken over: its replica stopped' is logged at warn, 'run
   *  finished' at info. */
  all: Map<string, number>;
}

/** The lines of `file` stamped within [from, to] (Date.now() values). */
export function logWindow(file: string, from: number, to: number): LogWindow {
  const w: LogWindow = { atLeastWarn: 0, errors: 0, byMessage: new Map(), all: new Map() };
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return w;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { level?: number; time?: string; msg?: string } | null = null;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const at = Date.parse(entry?.time ?? '');
    if (!(at >= from && at <= to)) continue;
    const msg = entry?.msg ?? '';
    w.all.set(msg, (w.all.get(msg) ?? 0) + 1);
    const level = entry?.level ?? 0;
    if (level < 40) continue;
    w.atLeastWarn += 1;
    if (level >= 50) w.errors += 1;
    w.byMessage.set(msg, (w.byMessage.get(msg) ?? 0) + 1);
  }
  return w;
}

/** "12 x run bookkeeping failed; 4 x ..." (the most frequent first, at most `max`). */
export function topMessages(w: LogWindow, max = 4): string {
  const list = [...w.byMessage.entries()].sort((a, b) => b[1] - a[1]).slice(0, max);
  return list.length ? list.map(([m, n]) => `${n} x ${m}`).join('; ') : 'none';
}
