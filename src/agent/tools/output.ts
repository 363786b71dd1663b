// Fitting a tool's output into `maxResultChars`: whole lines first, notes always kept.

/** Room kept for the note that says lines were left out. */
const CUT_NOTE_RESERVE = 160;

export interface Fitted {
  content: string;
  /** True when lines were left out to fit. */
  cut: boolean;
}

/**
 * Joins `lines` with newlines and appends `notes` (each `[...]`) after a blank line, leaving out trailing
 * lines (and saying how many) so that the whole stays within `maxChars`.
 */
export function fitLines(lines: readonly string[], notes: readonly string[], maxChars: number): Fitted {
  const noteText = notes.map((n) => `[${n}]`).join('\n');
  const join = (body: string, extra: string): string => {
    const tail = [extra, noteText].filter((t) => t !== '').join('\n');
    if (body === '') return tail;
    return tail === '' ? body : `${body}\n\n${tail}`;
  };

  const all = lines.join('\n');
  if (all.length + noteText.length + 2 <= maxChars) return { content: join(all, ''), cut: false };

  const budget = Math.max(0, maxChars - noteText.length - CUT_NOTE_RESERVE);
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const cost = line.length + (kept.length > 0 ? 1 : 0);
    if (used + cost > budget) {
      // A single line bigger than the whole budget still shows its start.
      if (kept.length === 0 && budget > 0) kept.push(line.slice(0, budget));
      break;
    }
    kept.push(line);
    used += cost;
  }
  const left = lines.length - kept.length;
  const cutNote =
    left > 0
      ? `[... ${left} more line${left === 1 ? '' : 's'} not shown: output is limited to ${maxChars} characters]`
      : `[... output cut at ${maxChars} characters]`;
  const content = join(kept.join('\n'), cutNote);
  return { content: content.length > maxChars ? content.slice(0, maxChars) : content, cut: true };
}
