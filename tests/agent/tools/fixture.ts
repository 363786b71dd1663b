import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from '../../../src/agent/tools/limits.js';
import { Workspace } from '../../../src/agent/tools/workspace.js';

/** A temp dir holding a workspace (`ws/`) and, beside it, a directory the tools must never reach. */
export interface Fixture {
  base: string;
  root: string;
  outside: string;
  ws: Workspace;
  limits: ToolLimits;
  /** Writes a file below the workspace root, creating directories; `mtime` in seconds since the epoch. */
  write(rel: string, content: string | Buffer, mtime?: number): string;
  link(rel: string, target: string): void;
  cleanup(): void;
}

export const OUTSIDE_SECRET = 'TOP-SECRET-OUTSIDE-THE-WORKSPACE';

export async function makeFixture(prefix = 'drydock-tools-'): Promise<Fixture> {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.ts'), `export const secret = '${OUTSIDE_SECRET}';\n`);
  writeFileSync(join(outside, 'passwd'), `root:x:0:0:${OUTSIDE_SECRET}\n`);
  const ws = await Workspace.open(root);
  return {
    base,
    root,
    outside,
    ws,
    limits: { ...DEFAULT_TOOL_LIMITS },
    write(rel, content, mtime) {
      const abs = join(root, rel);
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
      if (mtime !== undefined) utimesSync(abs, mtime, mtime);
      return abs;
    },
    link(rel, target) {
      const abs = join(root, rel);
      mkdirSync(dirname(abs), { recursive: true });
      symlinkSync(target, abs);
    },
    cleanup() {
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Asserts a tool result never shows the absolute workspace root or anything from outside it. */
export function expectNoLeak(content: string, fx: Fixture): void {
  if (content.includes(fx.base) || content.includes(fx.ws.root) || content.includes(OUTSIDE_SECRET)) {
    throw new Error(`tool result leaks a host path or outside content:\n${content}`);
  }
}
