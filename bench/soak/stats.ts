// Small figures and their formatting; a seeded random source so a soak can be repeated.
import { mulberry32 } from '../../tests/support/prng.js';

/** mulberry32: a small, fast, seeded PRNG in [0, 1). */
export const rng = mulberry32;

/** Least-squares slope of y over x (NaN with fewer than 2 distinct x). */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  let sx = 0;
  let sy = 0;
  for (const p of points) {
    sx += p.x;
    sy += p.y;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

export function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** m:ss since the soak started. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Left-aligned columns, widths from the content. */
export function table(rows: readonly (readonly string[])[], gap = 2, indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + gap)))
        .join('')
        .trimEnd(),
  );
}

export function counts(entries: Record<string, number>): string {
  const list = Object.entries(entries)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  return list.length ? list.map(([k, n]) => `${k} ${int(n)}`).join(', ') : 'none';
}

export function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}
