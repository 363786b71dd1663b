import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PathError, Workspace } from '../../../src/agent/tools/workspace.js';
import { type Fixture, makeFixture } from './fixture.js';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture('drydock-ws-');
  fx.write('src/a.ts', 'a\n');
});

afterEach(() => fx.cleanup());

async function refusal(p: string, opts?: { mustExist?: boolean }): Promise<PathError> {
  try {
    await fx.ws.resolve(p, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(PathError);
    // A message may echo the path the model gave, but never adds the host path of the workspace.
    if (!p.includes(fx.base)) expect((err as PathError).message).not.toContain(fx.base);
    return err as PathError;
  }
  throw new Error(`expected ${JSON.stringify(p)} to be refused`);
}

describe('Workspace', () => {
  it('opens at the real path of its root', async () => {
    fx.link('../ws-link', fx.root);
    const viaLink = await Workspace.open(join(fx.base, 'ws-link'));
    expect(viaLink.root).toBe(fx.ws.root);
    expect(new Workspace(fx.root).root).toBe(fx.ws.root);
    await expect(Workspace.open(join(fx.root, 'src/a.ts'))).rejects.toThrow(/not a directory/);
    await expect(Workspace.open(join(fx.base, 'missing'))).rejects.toThrow();
  });

  it('resolves relative paths, ./ and inner .. segments inside the root', async () => {
    expect(await fx.ws.resolve('src/a.ts')).toBe(join(fx.ws.root, 'src/a.ts'));
    expect(await fx.ws.resolve('./src/../src/a.ts')).toBe(join(fx.ws.root, 'src/a.ts'));
    expect(await fx.ws.resolve('.')).toBe(fx.ws.root);
  });

  it('allows an absolute path inside the workspace, also through the root as given', async () => {
    expect(await fx.ws.resolve(join(fx.ws.root, 'src/a.ts'))).toBe(join(fx.ws.root, 'src/a.ts'));
    fx.link('../ws-link', fx.root);
    const viaLink = await Workspace.open(join(fx.base, 'ws-link'));
    expect(await viaLink.resolve(join(fx.base, 'ws-link', 'src/a.ts'))).toBe(join(fx.ws.root, 'src/a.ts'));
  });

  it('refuses .. escapes, lexically', async () => {
    expect((await refusal('../../etc/passwd')).message).toBe(
      'path "../../etc/passwd" is outside the workspace',
    );
    await refusal('a/../../x');
    await refusal('..');
    await refusal('src/../../outside/passwd');
  });

  it('refuses absolute paths outside, including a sibling sharing the root as a prefix', async () => {
    expect((await refusal('/etc/passwd')).message).toBe('path "/etc/passwd" is outside the workspace');
    mkdirSync(`${fx.root}-sibling`);
    await refusal(`${fx.root}-sibling/x`);
    await refusal(join(fx.outside, 'passwd'));
  });

  it('refuses a symlinked file pointing outside', async () => {
    fx.link('passwd-link', '/etc/passwd');
    fx.link('secret-link', join(fx.outside, 'passwd'));
    expect((await refusal('passwd-link')).message).toMatch(/outside the workspace/);
    await refusal('secret-link');
  });

  it('refuses paths through a symlinked directory pointing outside, existing or not', async () => {
    fx.link('link', fx.outside);
    await refusal('link/passwd');
    await refusal('link');
    await refusal('link/not-there/yet.txt'); // a write target through the link
    await refusal('link/passwd', { mustExist: true });
  });

  it('refuses a dangling symlink whose target would be outside', async () => {
    fx.link('dangling', join(fx.outside, 'missing-file'));
    await refusal('dangling');
    await refusal('dangling/below');
  });

  it('refuses a symlink loop', async () => {
    symlinkSync(join(fx.root, 'loop-b'), join(fx.root, 'loop-a'));
    symlinkSync(join(fx.root, 'loop-a'), join(fx.root, 'loop-b'));
    await refusal('loop-a');
  });

  it('follows a symlink that stays inside', async () => {
    fx.link('inner-link', join(fx.root, 'src'));
    expect(await fx.ws.resolve('inner-link/a.ts')).toBe(join(fx.ws.root, 'src/a.ts'));
  });

  it('refuses NUL bytes and empty paths', async () => {
    expect((await refusal('src/a.ts\0.png')).message).toMatch(/NUL/);
    expect((await refusal('')).message).toBe('path is empty');
    await refusal('   ');
  });

  it('treats ~ literally, as a name inside the workspace', async () => {
    expect(await fx.ws.resolve('~/x')).toBe(join(fx.ws.root, '~', 'x'));
    await refusal('~/x', { mustExist: true });
    fx.write('~/x', 'tilde\n');
    expect(await fx.ws.resolve('~/x', { mustExist: true })).toBe(join(fx.ws.root, '~', 'x'));
  });

  it('resolves paths that do not exist yet unless mustExist', async () => {
    expect(await fx.ws.resolve('new/dir/file.txt')).toBe(join(fx.ws.root, 'new/dir/file.txt'));
    const err = await refusal('new/dir/file.txt', { mustExist: true });
    expect(err.message).toBe('path "new/dir/file.txt" does not exist');
    await refusal('src/a.ts/below', { mustExist: true });
  });

  it('gives workspace-relative paths and refuses to relativise outside ones', () => {
    expect(fx.ws.relative(join(fx.ws.root, 'src/a.ts'))).toBe('src/a.ts');
    expect(fx.ws.relative(fx.ws.root)).toBe('.');
    expect(() => fx.ws.relative(fx.outside)).toThrow(PathError);
  });

  it('cuts a very long path in messages', async () => {
    const err = await refusal(`/${'x'.repeat(5000)}`);
    expect(err.message.length).toBeLessThan(300);
  });
});
