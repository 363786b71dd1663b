import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactedConfig } from '../../src/config/load.js';
import { startTestDaemon } from '../support/daemon.js';
import { appKeyPair } from '../support/fake-github-app.js';
import { tempDir } from '../support/harness.js';

// github.app in the configuration: id and key file together, never with github.token, the key file checked at
// load (exists, readable, an RSA private key) with a line that names the file and never quotes it; the App's
// webhook secret verifies webhooks beside github.webhook_secrets.

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('drydock-app-config-');
});
afterEach(() => tmp.remove());

function problemsOf(env: Record<string, string>, yaml?: string): string[] {
  const configPath = yaml === undefined ? undefined : join(tmp.path, 'drydock.yaml');
  if (configPath) writeFileSync(configPath, yaml!);
  try {
    loadConfig({ env, baseDir: tmp.path, ...(configPath ? { configPath } : {}) });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('github.app', () => {
  it('loads from the file or the environment, the key path resolved against the start directory', () => {
    writeFileSync(join(tmp.path, 'app.pem'), appKeyPair().privateKey);
    const config = loadConfig({
      env: {},
      baseDir: tmp.path,
      configPath: writeYaml(
        'github:\n  app:\n    id: 123\n    private_key_file: app.pem\n    webhook_secret: s3cret\n',
      ),
    });
    expect(config.github.app).toEqual({
      id: 123,
      private_key_file: join(tmp.path, 'app.pem'),
      webhook_secret: 's3cret',
    });
    const fromEnv = loadConfig({
      env: {
        GITHUB_APP_ID: 'Iv23liAbCdEf012345',
        GITHUB_APP_PRIVATE_KEY_FILE: './app.pem',
        GITHUB_APP_WEBHOOK_SECRET: 'envsecret',
      },
      baseDir: tmp.path,
    });
    expect(fromEnv.github.app).toEqual({
      id: 'Iv23liAbCdEf012345',
      private_key_file: join(tmp.path, 'app.pem'),
      webhook_secret: 'envsecret',
    });
    expect(
      loadConfig({ env: { GITHUB_APP_ID: '77', GITHUB_APP_PRIVATE_KEY_FILE: 'app.pem' }, baseDir: tmp.path })
        .github.app.id,
    ).toBe(77);
    // The secret is redacted in the copy that is logged.
    expect(JSON.stringify(redactedConfig(config))).not.toContain('s3cret');
  });

  it('says what is wrong with the key file, naming it and never quoting it', () => {
    const key = (name: string, text: string) => {
      writeFileSync(join(tmp.path, name), text);
      return { GITHUB_APP_ID: '5', GITHUB_APP_PRIVATE_KEY_FILE: name };
    };
    expect(problemsOf({ GITHUB_APP_ID: '5', GITHUB_APP_PRIVATE_KEY_FILE: 'missing.pem' })).toEqual([
      `github.app.private_key_file: ${join(tmp.path, 'missing.pem')}: no such file`,
    ]);
    mkdirSync(join(tmp.path, 'dir.pem'));
    expect(problemsOf({ GITHUB_APP_ID: '5', GITHUB_APP_PRIVATE_KEY_FILE: 'dir.pem' })).toEqual([
      `github.app.private_key_file: ${join(tmp.path, 'dir.pem')}: is a directory`,
    ]);
    const garbage = `-----BEGIN RSA PRIVATE KEY-----\nSECRET-${randomUUID()}\n-----END RSA PRIVATE KEY-----\n`;
    const notAKey = problemsOf(key('garbage.pem', garbage));
    expect(notAKey).toEqual([
      `github.app.private_key_file: ${join(tmp.path, 'garbage.pem')} holds no PEM private key (GitHub gives an App's key as a .pem file, -----BEGIN RSA PRIVATE KEY-----)`,
    ]);
    expect(notAKey.join('\n')).not.toContain('SECRET-');
    const ec = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    expect(problemsOf(key('ec.pem', ec.privateKey))).toEqual([
      `github.app.private_key_file: ${join(tmp.path, 'ec.pem')} holds a key of type ec; a GitHub App's key is RSA`,
    ]);
  });

  it('takes id and key together, a real App id, and not a token beside it', () => {
    writeFileSync(join(tmp.path, 'app.pem'), appKeyPair().privateKey);
    expect(problemsOf({ GITHUB_APP_ID: '5' })).toEqual([
      'github.app.private_key_file: set id and private_key_file together (the App signs its JWT with the key), or neither, got nothing',
    ]);
    expect(problemsOf({ GITHUB_APP_ID: 'my-app', GITHUB_APP_PRIVATE_KEY_FILE: 'app.pem' })).toEqual([
      `github.app.id: expected the App's ID (a positive integer) or its client ID (Iv…), or null, got "my-app" (from GITHUB_APP_ID)`,
    ]);
    const both = problemsOf({
      GITHUB_TOKEN: 'ghp_secret0123456789',
      GITHUB_APP_ID: '5',
      GITHUB_APP_PRIVATE_KEY_FILE: 'app.pem',
    });
    expect(both).toEqual([
      'github.token: github.token and github.app are both set: drydock acts on GitHub as one of them; remove the token (GITHUB_TOKEN) to use the App, or the App to use the token (from GITHUB_TOKEN)',
    ]);
    expect(both.join('\n')).not.toContain('ghp_secret');
  });
});

describe("the App's webhook secret", () => {
  it('verifies webhooks beside github.webhook_secrets', async () => {
    const d = await startTestDaemon({
      patch: (c) => {
        c.github.app.webhook_secret = 'the-apps-webhook-secret';
      },
    });
    try {
      const send = async (secret: string) => {
        const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
        const res = await fetch(`${d.daemon.url}/webhooks/github`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': 'ping',
            'x-github-delivery': randomUUID(),
            'x-hub-signature-256': await new Webhooks({ secret }).sign(body),
          },
          body,
        });
        return res.status;
      };
      expect(await send('the-apps-webhook-secret')).toBe(200);
      expect(await send('some-other-secret')).toBe(401);
    } finally {
      await d.stop();
    }
  });
});

function writeYaml(text: string): string {
  const path = join(tmp.path, 'drydock.yaml');
  writeFileSync(path, text);
  return path;
}
