import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactedConfig } from '../../src/config/load.js';
import { tempDir } from '../support/harness.js';
import { serveProcess } from '../support/process-daemon.js';

let tmp: { path: string; remove(): void };
const children: ChildProcess[] = [];
beforeEach(() => {
  tmp = tempDir('drydock-notify-config-');
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  tmp.remove();
});

const SECRET = 'hmac-key-do-not-print-4411';
const SLACK = 'https://hooks.slack.com/services/T0001/B0001/slackpathsecret9';

function problems(yaml: string): { problems: string[]; message: string } {
  const path = join(tmp.path, 'drydock.yaml');
  writeFileSync(path, yaml);
  try {
    loadConfig({ configPath: path, env: {}, baseDir: tmp.path });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return { problems: (err as ConfigError).problems, message: (err as Error).message };
  }
  throw new Error('expected the configuration to be refused');
}

it('reads webhooks with their defaults: every event, unsigned, json', () => {
  const path = join(tmp.path, 'drydock.yaml');
  writeFileSync(
    path,
    `server:\n  public_url: https://drydock.example\nnotifications:\n  webhooks:\n    - url: https://hooks.example.com/a\n    - url: ${SLACK}\n      events: [plan.pending]\n      secret: ${SECRET}\n      format: slack\n`,
  );
  const c = loadConfig({ configPath: path, env: {}, baseDir: tmp.path });
  expect(c.server.public_url).toBe('https://drydock.example');
  expect(c.notifications.webhooks).toEqual([
    {
      url: 'https://hooks.example.com/a',
      events: [
        'plan.pending',
        'question.pending',
        'tool_approval.pending',
        'plan.executed',
        'plan.execution_failed',
        'delivery.failed',
        'limit.reached',
        'plan.approved',
        'plan.rejected',
        'delivery.succeeded',
      ],
      secret: null,
      format: 'json',
    },
    { url: SLACK, events: ['plan.pending'], secret: SECRET, format: 'slack' },
  ]);
  // What the daemon logs of its configuration shows neither the secret nor the URL's path.
  const shown = JSON.stringify(redactedConfig(c));
  expect(shown).not.toContain(SECRET);
  expect(shown).not.toContain('slackpathsecret9');
  expect(shown).toContain('https://hooks.slack.com/[redacted]');
});

it('refuses a URL that is not http(s), an unknown event or format, no events, each with a clear message', () => {
  const { problems: p, message } = problems(`notifications:
  webhooks:
    - url: hooks.example.com/no-scheme
      secret: ${SECRET}
    - url: ${SLACK}
      events: [plan.pending, plan.merged]
      secret: ${SECRET}
    - url: https://hooks.example.com/b
      format: teams
    - url: https://hooks.example.com/d
    - url: https://hooks.example.com/c
      events: []
  timeout_ms: 10
`);
  expect(p).toEqual([
    'notifications.webhooks[0].url: expected an http(s) URL, got (redacted)',
    'notifications.webhooks[1].events[1]: expected one of plan.pending, question.pending, tool_approval.pending, plan.executed, plan.execution_failed, delivery.failed, limit.reached, plan.approved, plan.rejected, delivery.succeeded, got "plan.merged"',
    'notifications.webhooks[2].format: expected json or slack, got "teams"',
    'notifications.webhooks[4].events: expected at least one event (leave events out for all of them), got a list',
    'notifications.timeout_ms: expected integer 100-120000, got 10',
  ]);
  expect(message).not.toContain(SECRET);
  expect(message).not.toContain('slackpathsecret9');
});

it('refuses the same URL twice (a receiver lists all its events once), without printing it', () => {
  const { problems: p } = problems(`notifications:
  webhooks:
    - url: ${SLACK}
      events: [plan.pending]
    - url: ${SLACK}
      events: [plan.executed]
`);
  expect(p).toEqual([
    'notifications.webhooks[1].url: the same url is listed twice; list each webhook once with all its events',
  ]);
});

it('refuses an empty secret and an unknown key, never printing a value under webhooks', () => {
  const { problems: p } = problems(`notifications:
  webhooks:
    - url: ${SLACK}
      secret: ""
      token: ${SECRET}
`);
  expect(p).toEqual([
    'notifications.webhooks[0].secret: expected a non-empty secret or null, got (redacted)',
    'notifications.webhooks[0].token: unknown key',
  ]);
  expect(p.join('\n')).not.toContain(SECRET);
});

it('drydock serve exits at start with the problem when notifications are misconfigured', async () => {
  const path = join(tmp.path, 'drydock.yaml');
  writeFileSync(
    path,
    'notifications:\n  webhooks:\n    - url: https://hooks.example.com/a\n      events: [plan.sent]\n',
  );
  await expect(
    serveProcess(join(tmp.path, 'data'), 'http://127.0.0.1:9', children, { DRYDOCK_CONFIG: path }),
  ).rejects.toThrow(/notifications\.webhooks\[0\]\.events\[0\]: expected one of plan\.pending/);
});
