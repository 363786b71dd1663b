import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Confinement, Sandbox } from '../../../../src/agent/sandbox.js';
import { DEFAULT_BASH_LIMITS, runBash, safeEnv } from '../../../../src/agent/tools/execute-tools.js';
import { tempDir } from '../../../support/harness.js';

// A command never holds the host's root, whoever the daemon runs as (issue 23, point 1). These run real
// bubblewrap: as root in CI (where a command used to be uid 0 with a writable /proc/sys), and as an
// unprivileged user (`.ci/run` runs the sandbox suites again as one).

const isRoot = process.getuid?.() === 0;

let tmp: { path: string; remove(): void };
let worktree: string;
let tools: string;
let sandbox: Sandbox;

beforeEach(async () => {
  tmp = tempDir('drydock-privilege-');
  worktree = join(tmp.path, 'worktrees', 'pln_1');
  tools = join(tmp.path, 'tools');
  mkdirSync(worktree, { recursive: true });
  mkdirSync(tools);
  sandbox = new Sandbox({ setting: 'bwrap', readOnlyPaths: [tools] });
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

async function sh(command: string, s = sandbox): Promise<{ out: string; code: number | null }> {
  const c = box();
  const r = await runBash(
    { command },
    { cwd: c.cwd, ...DEFAULT_BASH_LIMITS, env: safeEnv(process.env), wrap: (x) => s.wrap(c, x) },
  );
  return { out: r.content, code: r.exitCode };
}

describe('a command is never the host root', () => {
  it('cannot write /proc/sys (kernel.core_pattern runs a program as host root)', async () => {
    // Writing back the value already there: harmless if the write goes through, which is the failure.
    const r = await sh(
      'v=$(cat /proc/sys/kernel/core_uses_pid) && printf %s "$v" > /proc/sys/kernel/core_uses_pid && echo WROTE; echo end',
    );
    expect(r.out).toContain('end');
    expect(r.out).not.toContain('WROTE');
    expect(r.out).toMatch(/core_uses_pid: (Read-only file system|Permission denied)/);
  });

  it('cannot write /proc/sysrq-trigger either; both are read-only mounts inside', async () => {
    const r = await sh('grep -E " /proc/(sys|sysrq-trigger) " /proc/self/mountinfo');
    const lines = r.out.split('\n').filter((l) => / \/proc\/(sys|sysrq-trigger) /.test(l));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines) expect(line.split(' ')[5]).toMatch(/^ro,/);
  });

  it('runs as an unprivileged uid: the files it makes are not owned by host root', async () => {
    const r = await sh('touch made && id -u');
    expect(r.code, r.out).toBe(0);
    const owner = statSync(join(worktree, 'made')).uid;
    expect(owner).not.toBe(0);
    expect(owner).toBe(isRoot ? 65534 : process.getuid?.());
  });

  it('reads no root-only file in a mounted path', async () => {
    // As root this file is root's; as a plain user the daemon's own file would be readable by design, so
    // the check there is a real root-only directory the sandbox mounts (/etc/ssl/private on Debian).
    writeFileSync(join(tools, 'root-only.key'), 'private key material');
    chmodSync(join(tools, 'root-only.key'), 0o600);
    const r = await sh(`cat ${tools}/root-only.key; ls /etc/ssl/private; echo end`);
    expect(r.out).toContain('end');
    if (isRoot) expect(r.out).not.toContain('private key material');
    expect(r.out).toMatch(/\/etc\/ssl\/private'?: (Permission denied|No such file or directory)/);
  });

  it('has no capability in any namespace, an empty bounding set and no_new_privs', async () => {
    const r = await sh('grep -E "^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status');
    expect(r.out).toMatch(/CapEff:\s+0{16}/);
    expect(r.out).toMatch(/CapPrm:\s+0{16}/);
    expect(r.out).toMatch(/CapAmb:\s+0{16}/);
    if (isRoot) expect(r.out).toMatch(/CapBnd:\s+0{16}/);
    expect(r.out).toMatch(/NoNewPrivs:\s+1/);
  });
});

describe('limits', () => {
  const limited = () =>
    new Sandbox({
      setting: 'bwrap',
      limits: { memoryBytes: 64 * 1024 ** 2, cpuSeconds: 1, fileBytes: 1024 ** 2, tmpBytes: 2 * 1024 ** 2 },
    });

  it('a command that writes a file past the file limit is stopped, and the result says why', async () => {
    const s = limited();
    await s.handOver(worktree);
    const r = await sh('head -c 3000000 /dev/zero > big', s);
    expect(statSync(join(worktree, 'big')).size).toBeLessThanOrEqual(1024 ** 2);
    expect(r.out).toMatch(/exit code 153 \(SIGXFSZ: .*execute\.limits\.file_bytes\)/);
  });

  it('its /tmp holds at most the tmp limit', async () => {
    const s = limited();
    await s.handOver(worktree);
    const r = await sh(
      'head -c 900000 /dev/zero > /tmp/a; head -c 900000 /dev/zero > /tmp/b; head -c 900000 /dev/zero > /tmp/c; echo end',
      s,
    );
    expect(r.out).toMatch(/No space left on device/);
  });

  it('a command over its memory limit fails to allocate', async () => {
    const s = limited();
    await s.handOver(worktree);
    const r = await sh('python3 -c "x = bytearray(256 * 1024 * 1024)" 2>&1 || echo failed=$?', s);
    expect(r.out).toMatch(/MemoryError|failed=/);
  });

  it('a command over its CPU seconds is killed with SIGXCPU', async () => {
    const s = limited();
    await s.handOver(worktree);
    const spin = await sh('bash -c "while :; do :; done"; echo "exit=$?"', s);
    expect(spin.out).toMatch(/exit=(152|137)/);
    // The result says which limit, when the command itself is what the limit ended.
    const r = await sh('while :; do :; done', s);
    expect(r.out).toMatch(
      /exit code 152 \(SIGXCPU: .*execute\.limits\.cpu_seconds\)|exit code 137 \(SIGKILL/,
    );
  });
});
