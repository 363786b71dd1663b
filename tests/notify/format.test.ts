import { describe, expect, it } from 'vitest';
import { NOTIFICATION_TITLE, planTitle } from '../../src/domain/plan-title.js';
import type { LoggedEvent, Plan, Run } from '../../src/domain/types.js';
import { announce } from '../../src/notify/announce.js';
import { parseRetryAfter, retryDelay } from '../../src/notify/backoff.js';
import { type Envelope, renderBody, slackEscape, slackText } from '../../src/notify/format.js';
import { signBody } from '../../src/notify/signature.js';
import { shownUrl, uiLink, webhookKey } from '../../src/notify/webhooks.js';
import { verifySignature } from '../support/signature.js';
import { blockKitProblems } from './receiver.js';

describe('signature', () => {
  it("matches GitHub's documented example of an X-Hub-Signature-256 value", () => {
    // docs.github.com, "Validating webhook deliveries", testing the webhook payload validation.
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
  });

  it('verifies only the exact body under the exact secret, and refuses malformed headers', () => {
    const body = JSON.stringify({ id: 'ntf_1', event: 'plan.pending', text: 'grüße' });
    const header = signBody('s3cret', body);
    expect(verifySignature('s3cret', body, header)).toBe(true);
    expect(verifySignature('s3cret', Buffer.from(body, 'utf8'), header)).toBe(true);
    expect(verifySignature('s3cret', `${body} `, header)).toBe(false);
    expect(verifySignature('other', body, header)).toBe(false);
    expect(verifySignature('s3cret', body, header.toUpperCase())).toBe(false);
    expect(verifySignature('s3cret', body, header.slice(7))).toBe(false);
    expect(verifySignature('s3cret', body, `${header}00`)).toBe(false);
    expect(verifySignature('s3cret', body, undefined)).toBe(false);
  });
});

const envelope = (
  data: Partial<Envelope['data']> = {},
  event: Envelope['event'] = 'plan.pending',
): Envelope => ({
  id: 'ntf_abc',
  event,
  created_at: '2026-06-01T08:00:00.000Z',
  data: {
    run_id: 'run_1',
    plan_id: 'pln_1',
    title: 'Add a greeting',
    links: { plan: 'https://drydock.example/ui/plans/pln_1', run: 'https://drydock.example/ui/runs/run_1' },
    ...data,
  },
});

describe('bodies', () => {
  it('json: {id, event, created_at, data}', () => {
    const body = JSON.parse(renderBody('json', envelope()));
    expect(body).toEqual({
      id: 'ntf_abc',
      event: 'plan.pending',
      created_at: '2026-06-01T08:00:00.000Z',
      data: {
        run_id: 'run_1',
        plan_id: 'pln_1',
        title: 'Add a greeting',
        links: {
          plan: 'https://drydock.example/ui/plans/pln_1',
          run: 'https://drydock.example/ui/runs/run_1',
        },
      },
    });
  });

  it('slack: {"text", "blocks"}, the text a fallback with a <url|label> link', () => {
    const body = JSON.parse(renderBody('slack', envelope()));
    expect(Object.keys(body)).toEqual(['text', 'blocks']);
    expect(blockKitProblems(body.blocks)).toEqual([]);
    expect(body.text).toBe(
      '*drydock* Plan waiting for approval: Add a greeting\n<https://drydock.example/ui/plans/pln_1|open the plan>',
    );
  });

  it('slack: untrusted text cannot mention the channel, forge a link or break the line', () => {
    const hostile = 'Fix <!channel> & <https://evil.example|click here>\n> quoted';
    expect(slackEscape(hostile)).toBe(
      'Fix &lt;!channel&gt; &amp; &lt;https://evil.example|click here&gt; &gt; quoted',
    );
    const text = slackText(envelope({ title: hostile, error: '<@U123> failed' }, 'plan.execution_failed'));
    // The only < and > left are those of the link drydock wrote itself.
    expect(text.match(/[<>]/g)).toEqual(['<', '>']);
    expect(text).toContain('<https://drydock.example/ui/plans/pln_1|open the plan>');
    expect(text).toContain('error: &lt;@U123&gt; failed');
    expect(text.split('\n')).toHaveLength(2);
  });

  it('slack: without server.public_url the links are paths, written as text (Slack cannot link them)', () => {
    const text = slackText(envelope({ links: { plan: '/ui/plans/pln_1', run: '/ui/runs/run_1' } }));
    expect(text).toContain('open the plan: /ui/plans/pln_1');
    expect(text).not.toMatch(/[<>]/);
  });

  it('slack: a | in a configured URL cannot end the link early', () => {
    const text = slackText(envelope({ links: { plan: 'https://d.example/a|b&c' } }));
    expect(text).toContain('<https://d.example/a%7Cb&amp;c|open the plan>');
  });
});

describe('webhooks', () => {
  it('shows a URL without userinfo, query or the path below its first segment', () => {
    expect(shownUrl('https://user:pw@hooks.example.com:8443/hook?token=abc')).toBe(
      'https://hooks.example.com:8443/hook/…',
    );
    expect(shownUrl('https://hooks.slack.com/services/T000/B000/XXXXSECRET')).toBe(
      'https://hooks.slack.com/services/…',
    );
    expect(shownUrl('http://127.0.0.1:9000/drydock')).toBe('http://127.0.0.1:9000/drydock');
    expect(shownUrl('http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000');
  });

  it('keys a webhook by a hash of its URL (the URL itself is never stored)', () => {
    const url = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';
    expect(webhookKey(url)).toMatch(/^[0-9a-f]{16}$/);
    expect(webhookKey(url)).toBe(webhookKey(url));
    expect(webhookKey(url)).not.toBe(webhookKey(`${url}x`));
  });

  it('links under server.public_url, or relative paths without it', () => {
    expect(uiLink(null, '/ui/plans/p')).toBe('/ui/plans/p');
    expect(uiLink('https://d.example/drydock/', '/ui/plans/p')).toBe('https://d.example/drydock/ui/plans/p');
  });
});

describe('backoff', () => {
  const opts = { baseMs: 1_000, maxMs: 60_000 };

  it('doubles from the base up to the cap, a random half taken off', () => {
    expect(retryDelay(1, { ...opts, random: 0 })).toBe(500);
    expect(retryDelay(1, { ...opts, random: 0.999999 })).toBe(1_000);
    expect(retryDelay(2, { ...opts, random: 0 })).toBe(1_000);
    expect(retryDelay(4, { ...opts, random: 0.5 })).toBe(6_000);
    for (const attempt of [7, 10, 100, 10_000]) {
      const d = retryDelay(attempt, { ...opts, random: 0.7 });
      expect(d).toBeGreaterThanOrEqual(30_000);
      expect(d).toBeLessThanOrEqual(60_000);
    }
  });

  it("honours the receiver's Retry-After, up to the cap", () => {
    expect(retryDelay(1, { ...opts, random: 0, retryAfterMs: 20_000 })).toBe(20_000);
    expect(retryDelay(1, { ...opts, random: 0, retryAfterMs: 600_000 })).toBe(60_000);
    expect(parseRetryAfter('120', 0)).toBe(120_000);
    const now = Date.parse('2026-06-01T08:00:00Z');
    expect(parseRetryAfter('Mon, 01 Jun 2026 08:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

describe('announce', () => {
  const at = Date.parse('2026-06-01T08:00:00Z');
  const ev = (type: string, data: Record<string, unknown>, runId = 'run_x'): LoggedEvent => ({
    rowid: 7,
    runId,
    seq: 3,
    type,
    data,
    at,
  });
  const run = (patch: Partial<Run>): Run =>
    ({ id: 'run_x', sessionId: 'ses_1', executesPlanId: null, ...patch }) as Run;
  const plan = { id: 'pln_1', markdown: '## Add a greeting\n\nsteps', failureReason: null } as Plan;
  const ctx = { run: run({}), plan: null, publicUrl: 'https://d.example' };

  it('plan_proposed → plan.pending, titled by the plan heading, linked to the plan page', () => {
    const a = announce(ev('plan_proposed', { plan_id: 'pln_1', markdown: '# Fix  the\tbuild\nmore' }), ctx);
    expect(a).toEqual({
      event: 'plan.pending',
      runId: 'run_x',
      planId: 'pln_1',
      data: {
        run_id: 'run_x',
        plan_id: 'pln_1',
        session_id: 'ses_1',
        title: 'Fix the build',
        links: { plan: 'https://d.example/ui/plans/pln_1', run: 'https://d.example/ui/runs/run_x' },
        // Without facts (facts.ts), the fields every payload carries are there, empty.
        repository: null,
        workspace: null,
        pull_request: null,
        job: null,
        trigger: null,
        requested_by: null,
        approvers: [],
        cost: { plan_usd: null, execution_usd: null },
      },
    });
  });

  it('question_request → question.pending, titled by the first question', () => {
    const a = announce(
      ev('question_request', {
        question_id: 'qst_1',
        questions: [{ question: 'Which database?' }, { question: 'Which port?' }],
      }),
      ctx,
    );
    expect(a?.event).toBe('question.pending');
    expect(a?.data).toMatchObject({
      question_id: 'qst_1',
      title: 'Which database? (+1 more)',
      links: { question: 'https://d.example/ui/questions' },
    });
  });

  it('tool_approval_request → tool_approval.pending with the command or file', () => {
    const a = announce(
      ev('tool_approval_request', {
        tool_approval_id: 'tap_1',
        tool: 'Bash',
        input: { command: 'npm test' },
      }),
      { ...ctx, run: run({ executesPlanId: 'pln_1' }), plan },
    );
    expect(a).toMatchObject({
      event: 'tool_approval.pending',
      planId: 'pln_1',
      data: { tool_approval_id: 'tap_1', title: 'Bash: npm test' },
    });
  });

  it("an execute run's end → plan.executed or plan.execution_failed; other runs' ends → nothing", () => {
    const exec = run({ executesPlanId: 'pln_1', resultCommit: 'abc123', status: 'completed' });
    expect(announce(ev('run_finished', { status: 'completed' }), { ...ctx, run: exec, plan })).toMatchObject({
      event: 'plan.executed',
      data: { title: 'Add a greeting', commit: 'abc123', branch: 'drydock/pln_1', status: 'completed' },
    });
    expect(
      announce(ev('run_finished', { status: 'failed', error: 'budget' }), { ...ctx, run: exec, plan }),
    ).toMatchObject({ event: 'plan.execution_failed', data: { error: 'budget', status: 'failed' } });
    expect(announce(ev('run_finished', { status: 'planned' }), ctx)).toBeNull();
    expect(announce(ev('turn_finished', {}), ctx)).toBeNull();
  });

  it('delivery_failed → delivery.failed with the error and attempts', () => {
    const a = announce(ev('delivery_failed', { plan_id: 'pln_1', error: 'push refused', attempts: 5 }), {
      ...ctx,
      plan,
    });
    expect(a).toMatchObject({
      event: 'delivery.failed',
      planId: 'pln_1',
      data: { error: 'push refused', attempts: 5, title: 'Add a greeting' },
    });
  });

  it('titles are one line and at most 120 characters', () => {
    expect(planTitle(`# ${'x'.repeat(300)}`, NOTIFICATION_TITLE)).toHaveLength(120);
    expect(planTitle('\n\n  ##   Hello\r\n', NOTIFICATION_TITLE)).toBe('Hello');
  });
});

describe('docs/notifications.md', () => {
  it("the receiver's verification snippet accepts drydock's signature and nothing else", async () => {
    const { readFileSync } = await import('node:fs');
    const crypto = await import('node:crypto');
    const section = readFileSync(new URL('../../docs/notifications.md', import.meta.url), 'utf8');
    const code = /```js\n([\s\S]*?)```/.exec(section)![1]!.replace(/^import .*\n/m, '');
    const verified = new Function('createHmac', 'timingSafeEqual', `${code}\nreturn verified;`)(
      crypto.createHmac,
      crypto.timingSafeEqual,
    ) as (secret: string, raw: Buffer, header: unknown) => boolean;
    const body = renderBody('json', envelope());
    const header = signBody('s3cret', body);
    expect(verified('s3cret', Buffer.from(body), header)).toBe(true);
    expect(verified('s3cret', Buffer.from(`${body}\n`), header)).toBe(false);
    expect(verified('other', Buffer.from(body), header)).toBe(false);
    expect(verified('s3cret', Buffer.from(body), undefined)).toBe(false);
  });
});
