// A plan's title, as its commit subject, its pull request and the web pages name it.

/** The first heading or line of a plan, for a commit subject (at most 72 characters). */
export function planTitle(markdown: string): string {
  const line = markdown.split('\n').find((l) => l.trim() !== '') ?? 'drydock plan';
  const title = line.replace(/^#+\s*/, '').trim();
  return title.length > 72 ? `${title.slice(0, 69)}...` : title;
}
