import type { NotificationEvent } from '../domain/notifications.js';

/** What one notification says, before it is rendered for a receiver. */
export interface Envelope {
  /** The idempotency id (also X-Drydock-Delivery). */
  id: string;
  event: NotificationEvent;
  /** ISO-8601 UTC: when the announced event happened. */
  created_at: string;
  data: AnnouncementData;
}

/** The ids, a title (untrusted text: a plan's heading, a question, a command) and links to the web UI. */
export interface AnnouncementData {
  /** null: not about a run (limit.reached). */
  run_id: string | null;
  plan_id?: string | null;
  session_id?: string | null;
  question_id?: string;
  tool_approval_id?: string;
  title: string;
  /** plan.executed / plan.execution_failed / delivery.failed: what happened. */
  status?: string;
  error?: string | null;
  commit?: string | null;
  branch?: string | null;
  attempts?: number;
  /** limit.reached: the spend cap met (README, Spend caps). */
  scope?: string;
  scope_id?: string | null;
  cap?: string;
  limit?: number;
  spent?: number;
  day?: string;
  resets_at?: string;
  links: Record<string, string>;
}

/** The body for a receiver of `format`; the bytes stored and sent unchanged on every attempt. */
export function renderBody(format: 'json' | 'slack', envelope: Envelope): string {
  return format === 'slack' ? JSON.stringify({ text: slackText(envelope) }) : JSON.stringify(envelope);
}

// Slack incoming webhooks take a JSON body {"text": "..."} POSTed with Content-Type: application/json, and
// answer 200 "ok" (https://docs.slack.dev/tools/java-slack-sdk/guides/incoming-webhooks); a body Slack
// cannot read is refused with 400 invalid_payload, one without text with 400 no_text
// (https://api.slack.com/changelog/2016-05-17-changes-to-errors-for-incoming-webhooks).
// In that text, Slack parses `&`, `<` and `>` as control characters: links are written <url|label>, and
// <!channel>, <@U123> are mentions. Text that is not meant that way must have exactly these three replaced by
// &amp; &lt; &gt; (and nothing else HTML-encoded), https://api.slack.com/reference/surfaces/formatting#escaping.
// So every piece of untrusted text (a plan title, a question, a command, an error) is escaped: it can neither
// mention the channel nor forge a link.

/** Untrusted text made inert in a Slack message: `&`, `<`, `>` replaced by entities, kept on one line. */
export function slackEscape(text: string): string {
  return text
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** A link: <url|label> for an absolute URL; a relative path (no server.public_url) is shown as text. */
function slackLink(url: string, label: string): string {
  if (!/^https?:\/\//.test(url)) return `${label}: ${slackEscape(url)}`;
  // `|` would end the URL part early: percent-encode it (an URL's own text stays the same link).
  return `<${slackEscape(url).replace(/\|/g, '%7C')}|${slackEscape(label)}>`;
}

const HEADLINES: Record<NotificationEvent, string> = {
  'plan.pending': 'Plan waiting for approval',
  'question.pending': 'A run asks a question',
  'tool_approval.pending': 'A tool call waits for approval',
  'plan.executed': 'Plan executed',
  'plan.execution_failed': 'Plan execution failed',
  'delivery.failed': 'Delivering a plan result failed',
  'limit.reached': 'A spend cap was reached',
};

const LINK_LABELS: Record<string, string> = {
  plan: 'open the plan',
  question: 'answer',
  tool_approval: 'decide',
  run: 'open the run',
  usage: 'see where money went',
};

/** The `text` of a Slack message: a headline, the escaped title, what went wrong, and the links. */
export function slackText(e: Envelope): string {
  const d = e.data;
  const parts = [`*drydock* ${HEADLINES[e.event]}: ${slackEscape(d.title)}`];
  if (d.commit) parts.push(`commit ${slackEscape(d.commit.slice(0, 12))}`);
  if (d.error) parts.push(`error: ${slackEscape(d.error)}`);
  const links = Object.entries(d.links)
    .filter(([name]) => name !== 'run' || Object.keys(d.links).length === 1)
    .map(([name, url]) => slackLink(url, LINK_LABELS[name] ?? name));
  return `${parts.join(' — ')}${links.length ? `\n${links.join(' · ')}` : ''}`;
}
