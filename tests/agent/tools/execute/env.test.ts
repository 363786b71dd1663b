import { describe, expect, it } from 'vitest';
import { isSecretName, safeEnv } from '../../../../src/agent/tools/execute-tools.js';

describe('safeEnv', () => {
  it('keeps only harmless variables from the base', () => {
    const env = safeEnv({
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'UTC',
      TMPDIR: '/tmp',
      HOME: '/home/daemon',
      USER: 'daemon',
      SSH_AUTH_SOCK: '/tmp/ssh-agent',
      LD_PRELOAD: '/evil.so',
      BASH_ENV: '/evil.sh',
      NODE_OPTIONS: '--require /evil.js',
      TERM: 'xterm-256color',
      CI: 'false',
    });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'UTC',
      TMPDIR: '/tmp',
      TERM: 'dumb',
      GIT_TERMINAL_PROMPT: '0',
      CI: '1',
    });
  });

  it('takes HOME and other trusted values from extra', () => {
    const env = safeEnv({ HOME: '/home/daemon' }, { HOME: '/srv/ws', GIT_AUTHOR_NAME: 'drydock' });
    expect(env.HOME).toBe('/srv/ws');
    expect(env.GIT_AUTHOR_NAME).toBe('drydock');
  });

  it('never passes secret-looking names, even from extra', () => {
    const secrets = {
      ANTHROPIC_API_KEY: 'x',
      DRYDOCK_DB: 'x',
      drydock_token: 'x',
      GITHUB_APP_ID: 'x',
      DATABASE_URL: 'x',
      NPM_TOKEN: 'x',
      MY_SECRET: 'x',
      SSH_KEY_PATH: 'x',
      API_KEY: 'x',
      DB_PASSWORD: 'x',
      MYSQL_PASSWD: 'x',
      GOOGLE_APPLICATION_CREDENTIALS: 'x',
    };
    const env = safeEnv(secrets, secrets);
    for (const name of Object.keys(secrets)) {
      expect(env).not.toHaveProperty(name);
      expect(isSecretName(name)).toBe(true);
    }
    expect(isSecretName('PATH')).toBe(false);
    expect(isSecretName('GIT_AUTHOR_NAME')).toBe(false);
  });

  it('forces TERM, GIT_TERMINAL_PROMPT and CI over extra', () => {
    const env = safeEnv({}, { TERM: 'xterm', GIT_TERMINAL_PROMPT: '1', CI: '' });
    expect(env).toMatchObject({ TERM: 'dumb', GIT_TERMINAL_PROMPT: '0', CI: '1' });
  });

  it('drops empty and relative PATH entries, so a workspace file cannot shadow a command', () => {
    expect(safeEnv({ PATH: '.:/usr/bin::bin:/bin:' }).PATH).toBe('/usr/bin:/bin');
    expect(safeEnv({}).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
    expect(safeEnv({ PATH: '.' }).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
  });

  it('drops values with NUL bytes and invalid names', () => {
    const env = safeEnv({ LANG: 'C\0x' }, { 'BAD-NAME': 'x', '': 'x', 'A=B': 'x', GOOD: 'ok' });
    expect(env).not.toHaveProperty('LANG');
    expect(Object.keys(env).sort()).toEqual(['CI', 'GIT_TERMINAL_PROMPT', 'GOOD', 'PATH', 'TERM']);
  });
});
