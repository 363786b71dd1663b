import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../support/fake-clock.js';

// Configuration errors people act on: a mistyped key or value names what was meant, a plain value is shown as
// written (only secrets are hidden), and every problem, the retired model's too, is in one report.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'drydock-config-errors-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}, clock?: FakeClock): string[] {
  const path = join(dir, 'drydock.yaml');
  writeFileSync(path, yaml);
  try {
    loadConfig({ configPath: path, env, baseDir: dir, ...(clock ? { clock } : {}) });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
}

const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/XXXXsecretpathXXXX';
const HOOK_SECRET = 'notification-signing-secret-42';

describe('notification webhooks', () => {
  it('shows a mistyped event as written, with the event it may have meant; the URL and secret stay hidden', () => {
    const problems = problemsOf(`
notifications:
  webhooks:
    - url: ${SLACK_URL}
      secret: ${HOOK_SECRET}
      events: [plan.pending, plan.exectued]
      format: slak
`);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^notifications\.webhooks\[0\]\.events\[1\]: expected one of plan\.pending, .*, got "plan\.exectued"; did you mean plan\.executed\?$/,
    );
    expect(problems[1]).toBe(
      'notifications.webhooks[0].format: expected json or slack, got "slak"; did you mean slack?',
    );
    const text = problems.join('\n');
    expect(text).not.toContain('(redacted)');
    expect(text).not.toContain(SLACK_URL);
    expect(text).not.toContain(HOOK_SECRET);
  });

  it('hides a bad URL, a bad secret and a URL written where the mapping belongs', () => {
    const problems = problemsOf(`
notifications:
  webhooks:
    - url: ftp://hooks.example.test/T000/secret-path
      secret: ""
    - ${SLACK_URL}
`);
    expect(problems).toEqual([
      'notifications.webhooks[0].url: expected an http(s) URL, got (redacted)',
      'notifications.webhooks[0].secret: expected a non-empty secret or null, got (redacted)',
      'notifications.webhooks[1]: expected a mapping with url and optionally events, secret, format, got (redacted)',
    ]);
    expect(problems.join('\n')).not.toContain('secret-path');
    expect(problems.join('\n')).not.toContain(SLACK_URL);
  });

  it('names the key a mistyped one may have meant inside a webhook', () => {
    expect(
      problemsOf(`notifications:\n  webhooks:\n    - url: ${SLACK_URL}\n      evnets: [plan.pending]\n`),
    ).toEqual(['notifications.webhooks[0].evnets: unknown key; did you mean events?']);
  });
});

describe('unknown keys', () => {
  it('say which key was meant at the top level, in sections, under a named entry, or only that it is unknown', () => {
    const problems = problemsOf(`
log_levl: debug
delivery:
  pull_requests: true
mcp:
  servers:
    files:
      comand: /usr/bin/mcp-files
github:
  repositories:
    acme/widgets: { pth: /srv/widgets }
zebra: 1
`);
    expect(problems.sort()).toEqual(
      [
        'log_levl: unknown key; did you mean log_level?',
        'delivery.pull_requests: unknown key; did you mean pull_request?',
        'mcp.servers.files.comand: unknown key; did you mean command?',
        'github.repositories.acme/widgets.pth: unknown key; did you mean path?',
        'github.repositories.acme/widgets.path: expected the path of a local clone, got nothing',
        'mcp.servers.files: expected exactly one of command (stdio) or url (streamable HTTP)',
        'zebra: unknown key',
      ].sort(),
    );
  });
});

describe('values shown', () => {
  it('shows plain values, hides a URL password anywhere and a user that may be a token, keeps ssh user names', () => {
    const problems = problemsOf(`
log_level: loud
anthropic:
  base_url: ftp://admin:hunter2@models.example.test/
github:
  git_url: ssh://git@github.com
  api_url: gopher://ghp_tokenAsUser@github.example.test
`);
    expect(problems).toEqual([
      'log_level: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'anthropic.base_url: expected an http(s) URL, got "ftp://admin:(redacted)@models.example.test/"',
      'github.api_url: expected an http(s) URL, got "gopher://(redacted)@github.example.test"',
      'github.git_url: expected an http(s) URL, got "ssh://git@github.com"',
    ]);
    expect(problems.join('\n')).not.toContain('hunter2');
    expect(problems.join('\n')).not.toContain('ghp_tokenAsUser');
  });
});

describe('one report', () => {
  it('lists a retired model with the other problems, not after they are mended', () => {
    const clock = new FakeClock(Date.UTC(2026, 11, 5));
    const problems = problemsOf(
      'server:\n  port: eighty\nanthropic:\n  model: claude-opus-4-1\nscheduler:\n  batchsize: 10\n',
      {},
      clock,
    );
    expect(problems).toEqual([
      'server.port: expected integer 0-65535, got "eighty"',
      'scheduler.batchsize: unknown key; did you mean batch_size?',
      'anthropic.model: claude-opus-4-1 retired on 2026-08-05 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    ]);
  });

  it('lists an unpriced model and an unset MCP secret with a schema problem', () => {
    const problems = problemsOf(
      `log_level: loud\nanthropic:\n  model: my-model\nmcp:\n  servers:\n    db:\n      command: /bin/db-mcp\n      env: { DB_PASSWORD: "\${DB_PASSWORD}" }\n`,
    );
    expect(problems[0]).toMatch(/^log_level: expected one of/);
    expect(problems.slice(1)).toEqual([
      'anthropic.model: my-model is not in the model catalogue and has no price; add models.my-model.price (budgets are enforced from it)',
      expect.stringContaining('DB_PASSWORD'),
    ]);
  });

  it('leaves the model alone while its own settings are wrong (they are reported instead)', () => {
    const problems = problemsOf('anthropic:\n  model: ""\n');
    expect(problems).toEqual(['anthropic.model: expected a model id, got ""']);
  });
});
