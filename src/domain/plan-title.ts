// A plan's title, as its commit subject, its pull request, the web pages, the API's lists and the
// notifications name it: the first non-empty line of its text without the heading marks.

/** How one surface cuts a title. The surfaces differ in more than length, so each says so here. */
export interface TitleShape {
  /** The longest title, cut mark included. */
  max: number;
  /** What ends a cut title ('' cuts without a mark). */
  cutMark: string;
  /** The title of a plan with no text. */
  untitled: string;
  /**
   * For one-line surfaces (notifications): heading marks after leading whitespace are dropped too, and each
   * run of whitespace becomes one space.
   */
  oneLine: boolean;
}

/** A commit subject, a pull request and the web pages: at most 72 characters. */
export const COMMIT_SUBJECT: TitleShape = {
  max: 72,
  cutMark: '...',
  untitled: 'drydock plan',
  oneLine: false,
};
/** The API's plan lists (`title`): up to 200 characters, cut without a mark. */
export const LIST_TITLE: TitleShape = { max: 200, cutMark: '', untitled: '', oneLine: false };
/** Notifications (webhooks, Slack): one line of at most 120 characters. */
export const NOTIFICATION_TITLE: TitleShape = { max: 120, cutMark: '…', untitled: '', oneLine: true };

/** The first heading or line of a plan, shaped for one surface (a commit subject unless told). */
export function planTitle(markdown: string, shape: TitleShape = COMMIT_SUBJECT): string {
  const line = markdown.split('\n').find((l) => l.trim() !== '');
  if (line === undefined) return shape.untitled;
  const title = shape.oneLine
    ? line
        .replace(/^\s*#+\s*/, '')
        .replace(/\s+/g, ' ')
        .trim()
    : line.replace(/^#+\s*/, '').trim();
  return clipText(title, shape.max, shape.cutMark);
}

/** `text` cut to at most `max` characters, ending in `mark` when cut. */
export function clipText(text: string, max: number, mark: string): string {
  return text.length > max ? `${text.slice(0, max - mark.length)}${mark}` : text;
}
