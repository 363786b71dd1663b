// Small text rules shared by Read and Grep: what counts as binary, and how over-long lines are cut.

/** Bytes at the start of a file inspected for a NUL byte, as git and ripgrep do. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/**
 * Cuts `line` to `max` characters (never splitting a surrogate pair) and marks the cut. `total` describes the
 * whole line (e.g. "12000 characters" or "3.1 MiB") when known. Lines of at most `max` characters come back
 * unchanged unless `forceMark` says more of the line exists than `line` holds.
 */
export function cutLine(line: string, max: number, total?: string, forceMark = false): string {
  if (line.length <= max && !forceMark) return line;
  let end = Math.min(max, line.length);
  const code = line.charCodeAt(end - 1);
  if (end > 0 && end < line.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${line.slice(0, end)}… [line cut after ${end} characters${total ? `; the whole line is ${total}` : ''}]`;
}

/** Human-readable byte count for notes. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
}
