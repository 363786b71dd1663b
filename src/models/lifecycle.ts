// A model's lifecycle, told from its dates and the clock. The terms are Anthropic's (about-claude/
// model-deprecations, read 2026-12-04): active (fully supported), legacy (no more updates, may be deprecated
// later; still answers), deprecated (still answers, not recommended; a replacement is named and a retirement
// date assigned), retired (requests fail: the Messages API answers 404 not_found_error `model: <id>`).
// Anthropic gives at least 60 days' notice before a retirement. drydock adds one state of its own: a
// deprecated model within RETIRING_WITHIN_DAYS of its retirement date is "retiring" and warns wherever a
// person looks (start, /readyz, doctor, the plan page).
//
// A retirement date D means the model no longer answers from the start of D, UTC: the pages give a day, not
// an hour, so drydock refuses the model from 00:00 UTC on D rather than sending requests that may fail with a
// 404 during that day.

/** The lifecycle fields of a catalogue entry (and of `models.<id>` in the configuration). */
export interface Lifecycle {
  /** Anthropic lists the model as legacy. */
  legacy?: boolean;
  /** When Anthropic deprecated it (YYYY-MM-DD). */
  deprecated_on?: string;
  /** From this day on (UTC) the model no longer answers (YYYY-MM-DD). */
  retires_on?: string;
  /** The model to move to. */
  replacement?: string;
}

export const RETIRING_WITHIN_DAYS = 30;
const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type ModelState =
  | { state: 'active' }
  | { state: 'legacy'; replacement?: string }
  | { state: 'deprecated'; retiresOn?: string; replacement?: string }
  | { state: 'retiring'; retiresOn: string; daysLeft: number; replacement?: string }
  | { state: 'retired'; retiredOn: string; replacement?: string };

/** Midnight UTC of a YYYY-MM-DD date; undefined when `date` is not a real calendar date. */
export function startOfDay(date: string): number | undefined {
  const m = DATE.exec(date);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d)
    return undefined;
  return t;
}

/** Where a model stands at `now` (ms since the epoch): a pure function of its dates. */
export function modelState(m: Lifecycle, now: number): ModelState {
  const replacement = m.replacement !== undefined ? { replacement: m.replacement } : {};
  const retiresAt = m.retires_on !== undefined ? startOfDay(m.retires_on) : undefined;
  if (m.retires_on !== undefined && retiresAt !== undefined) {
    if (now >= retiresAt) return { state: 'retired', retiredOn: m.retires_on, ...replacement };
    const left = retiresAt - now;
    if (left <= RETIRING_WITHIN_DAYS * DAY_MS) {
      return {
        state: 'retiring',
        retiresOn: m.retires_on,
        daysLeft: Math.ceil(left / DAY_MS),
        ...replacement,
      };
    }
    return { state: 'deprecated', retiresOn: m.retires_on, ...replacement };
  }
  if (m.deprecated_on !== undefined) return { state: 'deprecated', ...replacement };
  if (m.legacy) return { state: 'legacy', ...replacement };
  return { state: 'active' };
}

const moveTo = (s: { replacement?: string }) => s.replacement ?? 'a current model';

/**
 * What a person is told about a model in `state`: an error (retired: nothing may be sent to it), a warning
 * (deprecated or retiring), a note (legacy), or nothing.
 */
export function lifecycleMessage(
  id: string,
  s: ModelState,
): { level: 'error' | 'warning' | 'note'; text: string } | undefined {
  switch (s.state) {
    case 'retired':
      return {
        level: 'error',
        text: `${id} retired on ${s.retiredOn} and no longer answers; use ${moveTo(s)} (docs/models.md)`,
      };
    case 'retiring':
      return {
        level: 'warning',
        text: `${id} retires on ${s.retiresOn} (in ${s.daysLeft} day${s.daysLeft === 1 ? '' : 's'}); move to ${moveTo(s)} before then`,
      };
    case 'deprecated':
      return {
        level: 'warning',
        text: `${id} is deprecated${s.retiresOn ? ` and retires on ${s.retiresOn}` : ''}; move to ${moveTo(s)}`,
      };
    case 'legacy':
      return {
        level: 'note',
        text: `${id} is a legacy model (no more updates, may be deprecated later); consider ${moveTo(s)}`,
      };
    default:
      return undefined;
  }
}
