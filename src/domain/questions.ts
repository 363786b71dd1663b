// How a question's header is shown to people (question pages, the CLI).

/** Headers are shown cut to this many characters (see `shortHeader`); longer ones are accepted and stored whole. */
export const MAX_HEADER_CHARS = 12;

/**
 * A header as shown to people: at most MAX_HEADER_CHARS characters, then "…".
 * Counts code points, so an emoji is never cut in half.
 */
export function shortHeader(header: string): string {
  const chars = Array.from(header.trim());
  return chars.length > MAX_HEADER_CHARS ? `${chars.slice(0, MAX_HEADER_CHARS).join('')}…` : chars.join('');
}

/** One question of an AskUserQuestion call, as stored and shown (unknown keys dropped). */
export type AskedQuestion = {
  question: string;
  header: string;
  options: { label: string; description: string; preview?: string | undefined }[];
  multiSelect: boolean;
};
