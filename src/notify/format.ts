import type { NotificationEvent } from '../domain/notifications.js';
import { clipText } from '../domain/plan-title.js';

/** What one notification says, before it is rendered for a receiver. */
export interface Envelope {
  /** The idempotency id (also X-Drydock-Delivery). */
  id: string;
  event: NotificationEvent;
  /** ISO-8601 UTC: when the announced event happened. */
  created_at: string;
  data: AnnouncementData;
}

/**
 * What every payload carries beside its ids (null or [] where it does not apply, e.g. limit.reached): where the
 * work came from, who asked and decided, what it cost. Fields are only ever added to payloads, never renamed
 * or removed; there is no schema version field.
 */
export interface CommonData {
  /** owner/repo when the work is on GitHub (a pull request's, or a configured clone's), else the workspace path. */
  repository: string | null;
  /** The session's workspace directory. */
  workspace: string | null;
  /** The pull request the work came from (a run a pull_request event started, and its later rounds). */
  pull_request: { repository: string; number: number; url: string } | null;
  /** The job (scheduled runs) or trigger (fired, or started by a GitHub event) that started the work. */
  job: { id: string; name: string | null } | null;
  trigger: { id: string; name: string | null } | null;
  requested_by: string | null;
  /** Who approved the plan so far, in order (decisions read when the event was collected). */
  approvers: string[];
  /** USD: the planning rounds so far; the execution once it ended (else null). */
  cost: { plan_usd: number | null; execution_usd: number | null };
}

/** The ids, a title (untrusted text: a plan's heading, a question, a command) and links to the web UI. */
export interface AnnouncementData extends Partial<CommonData> {
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
  /** plan.approved / plan.rejected: the plan's status after the decision. */
  plan_status?: string;
  /** plan.approved: who, what they said, and the approvals up to this one against those the plan needs. */
  approved_by?: string;
  comment?: string;
  approvals?: { count: number; required: number };
  /** plan.rejected: who, and their comment (null: none given). */
  rejected_by?: string;
  reason?: string | null;
  /** delivery.succeeded: where the result went (src/delivery/). */
  delivery?: {
    target: string | null;
    branch: string | null;
    commit: string | null;
    remote: string | null;
    /** The pull request opened (base, stacked) or pushed onto (head); null when none. */
    pull_request: { number: number | null; url: string } | null;
    /** The comment on the pull request the work came from. */
    comment_url: string | null;
  };
  /** limit.reached: the spend cap met (docs/spend-caps.md). */
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
  return format === 'slack' ? JSON.stringify(slackBody(envelope)) : JSON.stringify(envelope);
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
  'plan.approved': 'Plan approved',
  'plan.rejected': 'Plan rejected',
  'delivery.succeeded': 'Plan result delivered',
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
  pull_request: 'the pull request',
  delivered: 'see what was delivered',
};

/** The `text` of a Slack message: a headline, the escaped title, what went wrong, and the links. */
export function slackText(e: Envelope): string {
  const d = e.data;
  const parts = [`*drydock* ${HEADLINES[e.event]}: ${slackEscape(d.title)}`];
  if (d.commit) parts.push(`commit ${slackEscape(d.commit.slice(0, 12))}`);
  if (d.error) parts.push(`error: ${slackEscape(d.error)}`);
  if (d.approvals) parts.push(`${d.approvals.count} of ${d.approvals.required} approvals`);
  if (d.rejected_by) parts.push(`by ${slackEscape(d.rejected_by)}`);
  const links = Object.entries(d.links)
    .filter(([name]) => name !== 'run' || Object.keys(d.links).length === 1)
    .map(([name, url]) => slackLink(url, LINK_LABELS[name] ?? name));
  return `${parts.join(' — ')}${links.length ? `\n${links.join(' · ')}` : ''}`;
}

// ---- Block Kit
//
// A Slack body is {"text", "blocks"}: the blocks are what Slack shows; `text` (slackText above) is the
// fallback that notifications use ("Mobile notifications continue to exclusively use message.text",
// https://docs.slack.dev/changelog/2026/07/13/notification-changes). Slack's documented limits, which every
// body here stays within (so Slack never refuses one with invalid_blocks):
// - header block: its `text` is a plain_text object of at most 150 characters
//   (https://docs.slack.dev/reference/block-kit/blocks/header-block);
// - section block: `text` of 1 to 3000 characters; `fields` at most 10 items of at most 2000 characters each
//   (https://docs.slack.dev/reference/block-kit/blocks/section-block);
// - context block: `elements` at most 10 items (https://docs.slack.dev/reference/block-kit/blocks/context-block).
// The header holds only drydock's own headline (no untrusted text, so plain_text needs no escaping); all
// untrusted text is in mrkdwn, escaped by slackEscape and cut to fit before its limit is reached.

export const SLACK_LIMITS = { header: 150, sectionText: 3000, fields: 10, field: 2000, contextElements: 10 };

type Mrkdwn = { type: 'mrkdwn'; text: string };
export type SlackBlock =
  | { type: 'header'; text: { type: 'plain_text'; text: string } }
  | { type: 'section'; text: Mrkdwn }
  | { type: 'section'; fields: Mrkdwn[] }
  | { type: 'context'; elements: Mrkdwn[] };

/** The Slack body: Block Kit blocks carrying the payload's fields, and the `text` fallback. */
export function slackBody(e: Envelope): { text: string; blocks: SlackBlock[] } {
  const d = e.data;
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: clipText(headline(e), SLACK_LIMITS.header, '…') } },
    { type: 'section', text: mrkdwn(summary(d).slice(0, SLACK_LIMITS.sectionText)) },
  ];
  const fields = slackFields(d).slice(0, SLACK_LIMITS.fields);
  if (fields.length > 0) blocks.push({ type: 'section', fields: fields.map(mrkdwn) });
  const links = Object.entries(d.links)
    .slice(0, SLACK_LIMITS.contextElements)
    .map(([name, url]) => mrkdwn(fitLink(url, LINK_LABELS[name] ?? name, SLACK_LIMITS.field)));
  if (links.length > 0) blocks.push({ type: 'context', elements: links });
  return { text: slackText(e), blocks };
}

const mrkdwn = (text: string): Mrkdwn => ({ type: 'mrkdwn', text });

function headline(e: Envelope): string {
  const a = e.data.approvals;
  if (e.event === 'plan.approved' && a && a.count < a.required)
    return `Plan approval ${a.count} of ${a.required}`;
  return HEADLINES[e.event];
}

/** The section text: the title in bold, then what went wrong or what was said (each cut to fit). */
function summary(d: AnnouncementData): string {
  const lines = [`*${escapeWithin(d.title || '(untitled)', 1_000)}*`];
  if (d.error) lines.push(`Error: ${escapeWithin(d.error, 900)}`);
  if (d.reason) lines.push(`Reason: ${escapeWithin(d.reason, 900)}`);
  if (d.comment) lines.push(`Comment: ${escapeWithin(d.comment, 900)}`);
  return lines.join('\n');
}

/** The payload's fields as `*Label*\nvalue` (values escaped and cut to fit a field), those that apply. */
function slackFields(d: AnnouncementData): string[] {
  const budget = SLACK_LIMITS.field - 40;
  const text = (label: string, value: string | null | undefined) =>
    value ? `*${label}*\n${escapeWithin(value, budget)}` : null;
  const link = (label: string, url: string, shown: string) => `*${label}*\n${fitLink(url, shown, budget)}`;
  const pr = d.pull_request;
  const delivered = d.delivery?.pull_request;
  const cost = costLine(d.cost);
  return [
    text('Repository', d.repository),
    pr ? link('Pull request', pr.url, `${pr.repository}#${pr.number}`) : null,
    text('Job', d.job ? (d.job.name ?? d.job.id) : null),
    text('Trigger', d.trigger ? (d.trigger.name ?? d.trigger.id) : null),
    text('Requested by', d.requested_by),
    text('Approvers', d.approvers?.length ? d.approvers.join(', ') : null),
    d.approvals ? `*Approvals*\n${d.approvals.count} of ${d.approvals.required}` : null,
    text('Rejected by', d.rejected_by),
    text('Cost', cost),
    delivered
      ? link(
          'Delivered to',
          delivered.url,
          delivered.number !== null ? `#${delivered.number}` : 'pull request',
        )
      : text('Delivered to', d.delivery?.branch),
    text('Commit', d.commit ? d.commit.slice(0, 12) : null),
    text('Attempts', d.attempts !== undefined ? String(d.attempts) : null),
    text('Spent', d.spent !== undefined && d.limit !== undefined ? `${d.spent} of ${d.limit}` : null),
    text('Resets', d.resets_at),
  ].filter((f): f is string => f !== null);
}

function costLine(cost: AnnouncementData['cost']): string | null {
  if (!cost) return null;
  const parts = [
    cost.plan_usd !== null ? `planning $${cost.plan_usd.toFixed(4)}` : null,
    cost.execution_usd !== null ? `execution $${cost.execution_usd.toFixed(4)}` : null,
  ].filter((p): p is string => p !== null);
  return parts.length ? parts.join(', ') : null;
}

/** A link that fits `max` characters, else its address as (escaped, cut) text. */
function fitLink(url: string, label: string, max: number): string {
  const l = slackLink(url, label);
  return l.length <= max ? l : escapeWithin(url, max);
}

/**
 * Untrusted text escaped (slackEscape) in at most `max` characters: cut before escaping, a character at a
 * time, so that no entity (&amp;) is cut in half; ends in … when cut.
 */
export function escapeWithin(raw: string, max: number): string {
  const whole = slackEscape(raw);
  if (whole.length <= max) return whole;
  let out = '';
  for (const ch of raw.replace(/\p{Cc}+/gu, ' ')) {
    const piece = slackEscape(ch);
    if (out.length + piece.length > max - 1) break;
    out += piece;
  }
  return `${out}…`;
}
