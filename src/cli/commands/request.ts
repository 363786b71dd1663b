// What commands put in the paths they request: query strings and path segments.

/** `?a=1&b=2` from the defined entries, or ''. */
export function queryString(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const idPath = (id: string): string => encodeURIComponent(id);
