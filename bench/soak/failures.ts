/**
 * A check's failures as the report lists them: the first five of each check with their detail, then one
 * "... (more)" line.
 */
export function failureList(): { failures: string[]; fail: (check: string, detail: string) => void } {
  const failures: string[] = [];
  const shown = new Map<string, number>();
  const fail = (check: string, detail: string) => {
    const n = (shown.get(check) ?? 0) + 1;
    shown.set(check, n);
    if (n <= 5) failures.push(`${check}: ${detail}`);
    else if (n === 6) failures.push(`${check}: ... (more)`);
  };
  return { failures, fail };
}
