import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Egress } from '../../../../src/agent/egress.js';
import { type Confinement, Sandbox } from '../../../../src/agent/sandbox.js';
import {
  type BashOptions,
  DEFAULT_BASH_LIMITS,
  runBash,
  safeEnv,
} from '../../../../src/agent/tools/execute-tools.js';
import { hostAddress, lookupFrom } from '../../../support/egress.js';
import { makeRepo } from '../../../support/git-repo.js';
import { tempDir } from '../../../support/harness.js';

// The bubblewrap sandbox on this machine, for real: CI installs Debian's `bubblewrap`. Without it these tests
// fail (they are not skipped): the daemon's promise that commands are contained rests on them.

let tmp: { path: string; remove(): void };
let data: string;
let worktree: string;
let other: string;
let sandbox: Sandbox;

beforeEach(async () => {
  tmp = tempDir('drydock-sandbox-');
  data = join(tmp.path, 'data');
  worktree = join(data, 'worktrees', 'pln_1');
  other = join(tmp.path, 'other-workspace');
  mkdirSync(worktree, { recursive: true });
  mkdirSync(other);
  writeFileSync(join(data, 'drydock.db'), 'the daemon database');
  writeFileSync(join(other, 'secret.txt'), 'another team');
  writeFileSync(join(worktree, 'a.txt'), 'in the worktree\n');
  sandbox = new Sandbox({ setting: 'bwrap', hidden: [data] });
  // What the execute phase does with a worktree it made: a root daemon's commands run as another uid.
  await sandbox.handOver(worktree);
});

afterEach(() => tmp.remove());

const box = (over: Partial<Confinement> = {}): Confinement => ({
  cwd: worktree,
  writable: [worktree],
  readOnly: [],
  network: null,
  ...over,
});

function options(c: Confinement, s = sandbox): BashOptions {
  return {
    cwd: c.cwd,
    ...DEFAULT_BASH_LIMITS,
    env: safeEnv(process.env),
    wrap: (command) => s.wrap(c, command),
  };
}

async function sh(command: string, c = box()): Promise<{ out: string; code: number | null }> {
  const r = await runBash({ command }, options(c));
  return { out: r.content, code: r.exitCode };
}

describe('the bubblewrap sandbox', () => {
  it('works on this machine (bwrap is installed and usable)', async () => {
    expect(spawnSync('bwrap', ['--version'], { encoding: 'utf8' }).stdout).toMatch(/^bubblewrap \d/);
    expect(await sandbox.status()).toEqual({
      state: 'bwrap',
      detail: sandbox.runAs
        ? 'commands run in a bubblewrap sandbox as uid 65534 (the daemon runs as root: run it as an unprivileged user instead)'
        : 'commands run in a bubblewrap sandbox',
    });
  });

  it('runs the command in the worktree, which it may change', async () => {
    const r = await sh('pwd; cat a.txt; echo made > b.txt');
    expect(r.code).toBe(0);
    expect(r.out).toContain(worktree);
    expect(r.out).toContain('in the worktree');
    expect(readFileSync(join(worktree, 'b.txt'), 'utf8')).toBe('made\n');
  });

  it('shows no other process: its own PID namespace and /proc; the parent is bwrap with the clean environment', async () => {
    const env = safeEnv(process.env);
    const r = await sh(
      `echo "ppid=$PPID"; ls /proc | grep -cE '^[0-9]+$'; test -e /proc/${process.pid}/environ && echo VISIBLE; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; tr '\\0' '\\n' < /proc/1/environ`,
    );
    expect(r.out).not.toContain('VISIBLE');
    const [ppid, count] = r.out.split('\n');
    expect(ppid).toMatch(/^ppid=[12]$/);
    expect(Number(count)).toBeLessThanOrEqual(4);
    if (sandbox.runAs) {
      // A root daemon's command is another uid than bwrap's: it cannot even read bwrap's environment.
      expect(r.out).toMatch(/\/proc\/\d+\/environ: Permission denied/);
      expect(r.out).toMatch(/\/proc\/1\/environ: Permission denied/);
      return;
    }
    expect(r.code).toBe(0);
    // Every variable the sandbox's own processes can see is one drydock put there.
    const names = r.out
      .split('\n')
      .filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l))
      .map((l) => l.slice(0, l.indexOf('=')));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(Object.keys(env)).toContain(name);
  });

  it("cannot read the daemon's data directory, another workspace, /root or /etc beyond its short list", async () => {
    const r = await sh(
      `cat ${data}/drydock.db; cat ${other}/secret.txt; ls /root; ls /etc/shadow; ls ${data}; echo end`,
    );
    expect(r.out).not.toContain('the daemon database');
    expect(r.out).not.toContain('another team');
    expect(r.out).toMatch(new RegExp(`${data}/drydock.db: No such file or directory`));
    expect(r.out).toMatch(/\/root': No such file or directory/);
    expect(r.out).toMatch(/\/etc\/shadow': No such file or directory/);
    // The data directory shows only the way down to the worktree.
    expect(r.out).toMatch(/\nworktrees\n/);
  });

  it('cannot write outside the worktree; its /tmp is private', async () => {
    const r = await sh(
      `touch /usr/drydock-x; touch ${other}/x; echo inside > /tmp/drydock-private-x; echo end`,
    );
    expect(r.out).toMatch(/\/usr\/drydock-x': Read-only file system/);
    expect(existsSync(join(other, 'x'))).toBe(false);
    expect(existsSync('/tmp/drydock-private-x')).toBe(false);
  });

  it('has no capabilities and cannot gain privileges', async () => {
    const r = await sh(
      'grep -E "^(CapEff|CapPrm|NoNewPrivs)" /proc/self/status; mount -t tmpfs x /tmp; echo end',
    );
    expect(r.out).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.out).toMatch(/CapPrm:\s+0000000000000000/);
    expect(r.out).toMatch(/NoNewPrivs:\s+1/);
    expect(r.out).toMatch(/permission denied|must be superuser/i);
  });

  describe('network', () => {
    // The invariant (README, Security model): a command's only network is a loopback of its own; a plan that
    // allows host names reaches those names, and nothing else, through drydock's egress proxy. Nothing bound on
    // the host (its 127.0.0.1 above all: PostgreSQL with trust auth, the daemon's API) is reachable.
    let server: Server;
    let port: number;
    let connections = 0;
    let web: HttpServer;
    let webPort: number;
    let egress: Egress;
    const host = hostAddress();
    beforeEach(async () => {
      connections = 0;
      server = createServer((s) => {
        connections += 1;
        s.on('error', () => undefined);
        s.end('hello from the host\n');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as { port: number }).port;
      web = createHttpServer((req, res) =>
        res.end(`hello through the proxy: ${req.headers.host} ${req.url}\n`),
      );
      await new Promise<void>((r) => web.listen(0, '0.0.0.0', r));
      webPort = (web.address() as { port: number }).port;
      egress = new Egress({
        logger: pino({ level: 'silent' }),
        lookup: lookupFrom({ 'allowed.test': host, 'example.test': host, 'loop.test': '127.0.0.1' }),
      });
    });
    afterEach(async () => {
      await egress.close();
      await new Promise<void>((r) => web.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    });

    const connect = (p: number) => `exec 3<>/dev/tcp/127.0.0.1/${p} && cat <&3 && echo connected`;

    it('is off by default: not even the host loopback is reachable', async () => {
      const r = await sh(connect(port));
      expect(r.code).not.toBe(0);
      expect(r.out).not.toContain('connected');
      expect(connections).toBe(0);
    });

    it("allowed for example.test, still never reaches the host's 127.0.0.1 or its other addresses", async () => {
      const network = await egress.open(['example.test']);
      const r = await sh(
        `(${connect(port)}); (exec 3<>/dev/tcp/${host}/${webPort} && echo connected); echo end`,
        box({ network }),
      );
      expect(r.out).toContain('end');
      expect(r.out).not.toContain('connected');
      expect(r.out).not.toContain('hello');
      expect(connections).toBe(0);
    });

    it('reaches a listed name through the proxy, with the proxy variables set for it', async () => {
      const network = await egress.open(['allowed.test']);
      const r = await sh(
        `echo "$HTTP_PROXY $HTTPS_PROXY $NO_PROXY"; curl -sS --max-time 10 http://allowed.test:${webPort}/x?y=1`,
        box({ network }),
      );
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+ http:\/\/127\.0\.0\.1:\d+ localhost,127\.0\.0\.1,::1\n/,
      );
      expect(r.out).toContain(`hello through the proxy: allowed.test:${webPort} /x?y=1`);
    });

    it("shows the proxy's refusal: a name not listed, a listed name that resolves to 127.0.0.1, an IP address", async () => {
      const network = await egress.open(['allowed.test', 'loop.test']);
      const r = await sh(
        [
          `curl -sS --max-time 10 http://elsewhere.test:${webPort}/`,
          `curl -sS --max-time 10 http://loop.test:${port}/`,
          // A CONNECT (https) to this machine's own address, given as an IP: refused before any lookup.
          `curl -sS -v --max-time 10 https://${host}:${webPort}/ 2>&1 | grep -i -e '< HTTP' -e 'x-drydock-egress'`,
          'echo end',
        ].join('; '),
        box({ network }),
      );
      expect(r.out).toContain(
        "drydock egress proxy: elsewhere.test is not on this execution's list of host names (allowed.test, loop.test)",
      );
      expect(r.out).toContain('drydock egress proxy: loop.test resolves to 127.0.0.1, a loopback');
      expect(r.out).toMatch(/< HTTP\/1\.1 403 Forbidden/);
      expect(r.out).toMatch(
        new RegExp(`x-drydock-egress: ${host.replaceAll('.', '\\.')} is an IP address`, 'i'),
      );
      expect(connections).toBe(0);
    });
  });

  it("reads the repository's git directory but cannot change it; git works in the worktree", async () => {
    const repo = join(tmp.path, 'repo');
    makeRepo(repo, { 'README.md': '# r\n' });
    const wt = join(data, 'worktrees', 'pln_2');
    spawnSync('git', ['-C', repo, 'worktree', 'add', '-q', '--detach', wt], { encoding: 'utf8' });
    await sandbox.handOver(wt);
    const c = box({ cwd: wt, writable: [wt], readOnly: [join(repo, '.git')] });
    const r = await sh(`echo new > new.txt; git status --short; touch ${repo}/.git/x; echo end`, c);
    expect(r.out).toContain('?? new.txt');
    // Read-only to every uid; a root daemon's command is another uid, refused before the mount is asked.
    expect(r.out).toMatch(/\.git\/x': (Read-only file system|Permission denied)/);
    expect(existsSync(join(repo, '.git', 'x'))).toBe(false);
  });

  it('covers a hidden file that lies under a mounted path (the config file beside a toolchain)', async () => {
    const tools = join(tmp.path, 'tools');
    mkdirSync(tools);
    writeFileSync(join(tools, 'drydock.yaml'), 'admin_token: do-not-show');
    writeFileSync(join(tools, 'tool.sh'), 'echo tool ran\n');
    const s = new Sandbox({
      setting: 'bwrap',
      readOnlyPaths: [tools],
      hidden: [data, join(tools, 'drydock.yaml')],
    });
    const r = await runBash(
      { command: `cat ${tools}/drydock.yaml; bash ${tools}/tool.sh` },
      options(box(), s),
    );
    expect(r.exitCode).toBe(0);
    expect(r.content).not.toContain('do-not-show');
    expect(r.content).toContain('tool ran');
  });
});

describe('without a working sandbox', () => {
  it('says so: unavailable names the reason; off is what the operator chose', async () => {
    const missing = await new Sandbox({ setting: 'bwrap', bwrap: '/nonexistent/bwrap' }).status();
    expect(missing.state).toBe('unavailable');
    expect(missing.detail).toMatch(/\/nonexistent\/bwrap: ENOENT/);
    expect(missing.detail).toMatch(/execute\.sandbox/);
    expect((await new Sandbox({ setting: 'off' }).status()).state).toBe('off');
  });
});
