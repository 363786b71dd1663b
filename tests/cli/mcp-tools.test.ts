import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { tempDir } from '../support/harness.js';
import { EVERYTHING, FIXTURES, NODE_MODULES } from '../support/mcp.js';
import { runCli } from './cli-process.js';

// `drydock mcp tools <server>` as a real process, from a configuration file, against the registry's
// server-everything started in the sandbox as a run would start it.

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('drydock-mcp-cli-');
  chmodSync(tmp.path, 0o755);
});
afterEach(() => tmp.remove());

function configFile(servers: Record<string, unknown>): string {
  const path = join(tmp.path, 'drydock.yaml');
  writeFileSync(path, stringify({ data_dir: join(tmp.path, 'data'), mcp: { servers } }));
  return path;
}

const everything = (more: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [EVERYTHING, 'stdio'],
  read_only_paths: [NODE_MODULES],
  ...more,
});

describe('drydock mcp tools', () => {
  it('lists each tool with its hints and which phase may call it, and why', async () => {
    const path = configFile({ everything: everything({ plan_tools: ['get-sum'], auto_tools: ['echo'] }) });
    const r = await runCli(['mcp', 'tools', 'everything', '--config', path]);
    expect(r.code, r.stderr).toBe(0);
    const block = (name: string) => {
      const lines = r.stdout.split('\n');
      const i = lines.indexOf(lines.find((l) => l.startsWith(`mcp__everything__${name} `))!);
      return lines.slice(i, i + 6);
    };
    expect(r.stdout).toMatch(/^MCP server everything, stdio: .* \(in the sandbox\)\nannotations not trusted/);
    expect(block('echo')).toEqual([
      'mcp__everything__echo (Echo Tool)',
      '  hints: readOnlyHint=true destructiveHint=false idempotentHint=true openWorldHint=false',
      '  plan: not offered: readOnlyHint: true, but not trusted (trust_annotations: false); name it in plan_tools to offer it',
      '  execute manual: ask: every call waits for a person',
      '  execute edits: ask: hints not trusted (trust_annotations: false)',
      '  execute auto: allow: named in auto_tools',
    ]);
    expect(block('get-sum')[2]).toBe('  plan: offered: named in plan_tools');
    expect(r.stdout).toMatch(/\n\d+ tool\(s\), 1 offered in plan mode\n$/);
  });

  it('shows trusted hints deciding plan mode and edits, as JSON', async () => {
    const path = configFile({ everything: everything({ trust_annotations: true }) });
    const r = await runCli(['mcp', 'tools', 'everything', '--config', path, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const gzip = out.tools.find((t: { name: string }) => t.name === 'mcp__everything__gzip-file-as-resource');
    expect(gzip.plan).toEqual({ offered: false, why: 'not in plan_tools, and not marked read-only' });
    expect(gzip.execute.edits).toEqual({
      rule: 'allow',
      why: 'destructiveHint: false, trusted: runs like Write',
    });
    const echo = out.tools.find((t: { name: string }) => t.name === 'mcp__everything__echo');
    expect(echo.plan).toEqual({
      offered: true,
      why: 'readOnlyHint: true, and the server has trust_annotations: true',
    });
  });

  it('exits 1 with the stderr tail of a server that does not start, 2 for a server not configured', async () => {
    const path = configFile({
      broken: {
        command: process.execPath,
        args: [join(FIXTURES, 'fails-to-start.mjs')],
        read_only_paths: [FIXTURES],
      },
    });
    const failed = await runCli(['mcp', 'tools', 'broken', '--config', path]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      'drydock: MCP server broken: stopped (exit 3) before it answered initialize',
    );
    expect(failed.stderr).toContain('fatal: the database is unreachable');
    const unknown = await runCli(['mcp', 'tools', 'nope', '--config', path]);
    expect(unknown).toMatchObject({
      code: 2,
      stderr: 'drydock: no MCP server nope in mcp.servers (broken)\n',
    });
  });
});
