// Figures and their formatting. Durations are milliseconds, fractional.

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
function rank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const list = Array.from(sorted);
  let sum = 0;
  for (const v of list) sum += v;
  return {
    count: list.length,
    p50: rank(list, 0.5),
    p99: rank(list, 0.99),
    mean: list.length ? sum / list.length : Number.NaN,
    max: list.length ? list[list.length - 1]! : Number.NaN,
  };
}

/** Sub-millisecond precision where it matters: 0.042 ms, 0.42 ms, 3.17 ms, 41.2 ms, 512 ms, 2.35 s. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const a = Math.abs(value);
  if (a >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (a >= 1_000) return `${(value / 1000).toFixed(2)} s`;
  if (a >= 100) return `${value.toFixed(0)} ms`;
  if (a >= 10) return `${value.toFixed(1)} ms`;
  if (a >= 0.1) return `${value.toFixed(2)} ms`;
  return `${value.toFixed(3)} ms`;
}

export function p50p99(s: Summary): string {
  return s.count ? `${ms(s.p50)} / ${ms(s.p99)}` : 'n/a';
}

/** Decimal megabytes (gigabytes from 1 GB), as targets such as 300 MB are written. */
export function mb(bytes: number): string {
  if (bytes >= 10e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  return `${(bytes / 1e6).toFixed(bytes >= 100e6 ? 0 : 1)} MB`;
}

export function kb(bytes: number): string {
  return `${(bytes / 1e3).toFixed(1)} KB`;
}

export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function perSecond(count: number, wallMs: number): number {
  return wallMs > 0 ? count / (wallMs / 1000) : Number.NaN;
}

export function rate(count: number, wallMs: number): string {
  const r = perSecond(count, wallMs);
  if (!Number.isFinite(r)) return 'n/a';
  return `${r >= 100 ? int(r) : r.toFixed(1)}/s`;
}

/** Left-aligned columns, widths from the content. */
export function table(rows: readonly (readonly string[])[], gap = 3): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + gap)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

/** Greedy word wrap; continuation lines start with `indent`. */
export function wrap(text: string, width = 110, indent = ''): string {
  const lines: string[] = [];
  let line = /^\s*/.exec(text)![0];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.trim() && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else {
      line = line.trim() ? `${line} ${word}` : `${line}${word}`;
    }
  }
  if (line) lines.push(line);
  return lines.join('\n');
}
