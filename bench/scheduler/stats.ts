// Figures and their formatting.

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
function rank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: rank(sorted, 0.5),
    p99: rank(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (Math.abs(value) >= 1_000) return `${(value / 1000).toFixed(2)} s`;
  return `${Math.round(value)} ms`;
}

/** Decimal megabytes, as the target (300 MB) is written. */
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

export function latency(s: Summary): string {
  return s.count ? `${ms(s.p50)} / ${ms(s.p99)}` : 'n/a';
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
