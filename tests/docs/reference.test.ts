import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Group, Subcommand } from '../../src/cli/commands/group.js';
import { LOCAL_COMMANDS } from '../../src/cli/commands/local.js';
import { REMOTE_GROUPS, STANDALONE } from '../../src/cli/help.js';
import { configPaths, generatedPart } from '../../src/cli/reference.js';
import { generatedPages } from '../../src/cli/write-docs.js';
import { configSchema } from '../../src/config/schema.js';
import { NOTIFICATION_EVENTS } from '../../src/domain/notifications.js';
import { ROUTES } from '../../src/http/contract/index.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../cli/cli-process.js';
import { createHarness, type Harness } from '../support/harness.js';

// The completeness test of the documentation: every command and option, configuration key, HTTP route and
// notification event has its entry in docs/, and no entry names one that does not exist; the generated parts
// (npm run docs) are what the generator writes today; `drydock --help` is the top of docs/cli.md; the README
// stays short; and every relative link of README.md and docs/*.md leads to a file and a heading that exist.
// Each failure says what to add or change, and where.

const ROOT = packageRoot();
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

/** A page's lines outside fenced code blocks (links and headings there are text, not Markdown). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to `-`; repeats get `-1`, `-2`. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const slug = h[1]!
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

// ---- generated parts and --help

describe('the generated parts', () => {
  it('are what `npm run docs` writes from the code today', () => {
    const stale = Object.entries(generatedPages(ROOT))
      .filter(([path, text]) => read(path) !== text)
      .map(([path]) => path);
    expect(
      stale,
      `${stale.join(', ')} differ from what the generator writes: run \`npm run docs\` and commit the result`,
    ).toEqual([]);
  });

  it('docs/cli.md starts with exactly what `drydock --help` prints', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    const part = generatedPart(read('docs/cli.md')) ?? '';
    const block = /## drydock --help\n[\s\S]*?```text\n([\s\S]*?)\n```/.exec(part)?.[1];
    expect(
      block,
      'docs/cli.md has no "## drydock --help" section with a ```text block: run `npm run docs`',
    ).toBe(r.stdout.trimEnd());
  });
});

// ---- commands and options

/** The section of docs/cli.md under `heading`, up to the next heading of its level or above. */
function section(page: string, heading: string): string | null {
  const lines = page.split('\n');
  const at = lines.indexOf(heading);
  if (at < 0) return null;
  const level = heading.indexOf(' ');
  const end = lines.findIndex((l, i) => i > at && /^#{1,6} /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(at + 1, end < 0 ? undefined : end).join('\n');
}

/** The options a help text lists as its own (its option lines: `  --name ...` or `  -n, --name ...`). */
const listedOptions = (help: string) =>
  [...help.matchAll(/^\s{2,}(?:-\w, )?--([a-z][\w-]*)/gm)].map((m) => m[1]!);

/** The commands the docs must describe: the local ones, each remote group's, and apply/export. */
function commands(): { name: string; heading: string; options: string[]; where: string }[] {
  const remote = (g: Group | null, name: string, c: Subcommand) => ({
    name: g ? `${g.name} ${name}` : name,
    heading: g ? `#### drydock ${g.name} ${name}` : `### drydock ${name}`,
    options: Object.keys(c.options),
    where: g
      ? `the help of "${g.name} ${name}" in src/cli/commands/${g.name}.ts`
      : `the help of ${name} (src/cli/commands/apply.ts)`,
  });
  return [
    ...LOCAL_COMMANDS.map((c) => ({
      name: c.name,
      heading: `### drydock ${c.name}`,
      options: c.options.map((o) => o.name),
      where: `its options in src/cli/commands/local.ts`,
    })),
    ...REMOTE_GROUPS.flatMap((g) => Object.entries(g.commands).map(([name, c]) => remote(g, name, c))),
    ...STANDALONE.map(({ name, command }) => remote(null, name, command)),
  ];
}

describe('commands and options', () => {
  const page = read('docs/cli.md');

  it('every command has its section in docs/cli.md, and every option of it is documented there', () => {
    const problems: string[] = [];
    for (const c of commands()) {
      const text = section(page, c.heading);
      if (text === null) {
        problems.push(`drydock ${c.name}: no "${c.heading}" in docs/cli.md: run \`npm run docs\``);
        continue;
      }
      for (const o of c.options) {
        if (!new RegExp(`--${o}\\b`).test(text)) {
          problems.push(
            `drydock ${c.name} --${o}: not in its help; add a line for it to ${c.where}, then npm run docs`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('every option a help text lists is one the command takes', () => {
    const problems: string[] = [];
    const connection = ['url', 'token', 'help'];
    for (const c of commands()) {
      const text = section(page, c.heading) ?? '';
      for (const o of listedOptions(text)) {
        if (!c.options.includes(o) && !connection.includes(o)) {
          problems.push(`drydock ${c.name}: its help lists --${o}, which it does not take; fix ${c.where}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('docs/cli.md describes no command that does not exist', () => {
    const known = new Set([
      ...commands().map((c) => c.heading),
      ...REMOTE_GROUPS.map((g) => `### drydock ${g.name}`),
    ]);
    const extra = prose(page).filter((l) => /^#{3,4} drydock /.test(l) && !known.has(l));
    expect(extra, 'headings of commands that no longer exist: run `npm run docs`').toEqual([]);
  });

  it('every command the pages name exists', () => {
    const groups = new Map(REMOTE_GROUPS.map((g) => [g.name, Object.keys(g.commands)]));
    const others = new Set([
      ...LOCAL_COMMANDS.map((c) => c.name.split(' ')[0]!),
      ...STANDALONE.map((c) => c.name),
      'help',
      // The name of a plan's check run on GitHub (`drydock plan`) and the start's log line (`drydock
      // started`), not commands.
      'plan',
      'started',
    ]);
    const locals = new Set(LOCAL_COMMANDS.map((c) => c.name));
    const problems: string[] = [];
    for (const file of ['README.md', ...DOCS]) {
      for (const line of prose(read(file))) {
        for (const m of line.matchAll(/`drydock ([a-z][\w-]*)(?: ([a-z][\w-]*))?/g)) {
          const [, first, second] = m as unknown as [string, string, string | undefined];
          const subs = groups.get(first);
          if (subs ? second !== undefined && !subs.includes(second) : !others.has(first)) {
            problems.push(`${file}: \`drydock ${first}${second ? ` ${second}` : ''}\` is no command`);
          } else if ((first === 'token' || first === 'mcp') && second && !locals.has(`${first} ${second}`)) {
            problems.push(`${file}: \`drydock ${first} ${second}\` is no command`);
          }
        }
      }
    }
    expect(problems, 'fix the command (docs/cli.md lists them all) or drop it').toEqual([]);
  });

  it('every command main.ts dispatches is defined where help and the docs read it', () => {
    const main = read('src/cli/main.ts');
    const cases = [...main.matchAll(/case '([a-z][\w-]*)':/g)].map((m) => m[1]!);
    const defined = new Set([
      ...LOCAL_COMMANDS.map((c) => c.name.split(' ')[0]!),
      ...STANDALONE.map((s) => s.name),
      'version',
      'help',
    ]);
    const missing = cases.filter((c) => !defined.has(c));
    expect(
      missing,
      'local commands main.ts runs without a definition: add each to LOCAL_COMMANDS in src/cli/commands/local.ts',
    ).toEqual([]);
  });
});

// ---- configuration keys

/** A configuration path as a pattern: `<id>` and `*` stand for any one segment, `[]` may be left out. */
function keyPattern(path: string): RegExp {
  const parts = path
    .split('.')
    .map((p) =>
      p.startsWith('<')
        ? '[^.]+'
        : p.replace(/\[\]$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&') +
          (p.endsWith('[]') ? '(?:\\[\\])?' : ''),
    );
  return new RegExp(`^${parts.join('\\.')}$`);
}

/** What looks like a dotted key but is a file or a host name. */
const FILE_OR_HOST = /\.(ts|js|md|json|ya?ml|sql|com|org|io|dev|net)$/;

describe('configuration keys', () => {
  const paths = configPaths(configSchema);
  const page = read('docs/configuration.md');

  it('every key of the schema has its row in docs/configuration.md', () => {
    const missing = paths.filter((p) => !page.includes(`| \`${p}\` |`));
    expect(
      missing,
      'keys without a row in docs/configuration.md: document them in config/drydock.example.yaml, then npm run docs',
    ).toEqual([]);
  });

  it('every key the docs name exists', () => {
    const sections = paths.filter((p) => !p.includes('.'));
    // Notification events look like keys: those of the code, and those the page's samples send.
    const samples = read('docs/notifications.md').matchAll(/"event": "([a-z_.]+)"/g);
    const events = new Set<string>([...NOTIFICATION_EVENTS, ...[...samples].map((m) => m[1]!)]);
    const patterns = paths.map(keyPattern);
    const problems: string[] = [];
    for (const file of ['README.md', ...DOCS]) {
      for (const line of prose(read(file))) {
        for (const m of line.matchAll(/`([a-z_]+(?:\.(?:[a-z0-9_]+|<[^>]+>|\*))+)`/g)) {
          const key = m[1]!;
          // A file name (`runs.ts`), a host name (`github.com`) or an event (`delivery.failed`) is no key.
          if (!sections.includes(key.split('.')[0]!) || FILE_OR_HOST.test(key)) continue;
          if (events.has(key)) continue;
          // `execute.limits.*`: any key below execute.limits.
          const known = key.endsWith('.*')
            ? paths.some((p) => p.startsWith(key.slice(0, -1)))
            : patterns.some((p) => p.test(key.replace(/\*/g, 'x')));
          if (!known) problems.push(`${file}: \`${key}\` is no configuration key`);
        }
      }
    }
    expect(problems, 'fix the key (src/config/schema.ts has them all) or drop it').toEqual([]);
  });
});

// ---- HTTP routes

/** The paths of drydock's API (the routes docs name of GitHub's API, `GET /app`, are not). */
const OURS = /^\/(v1\/|webhooks\/|healthz$|readyz$|metrics$|openapi\.json$)/;

describe('HTTP routes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  it('the routes the app serves, the OpenAPI document and docs/http-api.md agree', () => {
    const served = new Set<string>();
    for (const r of h.app.routes) {
      if (r.method === 'ALL' || r.path.startsWith('/ui')) continue;
      served.add(`${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    }
    const contract = new Set(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`));
    const part = generatedPart(read('docs/http-api.md')) ?? '';
    const documented = new Set([...part.matchAll(/^### `([A-Z]+ \S+)`$/gm)].map((m) => m[1]!));
    const problems = [
      ...[...served]
        .filter((r) => !contract.has(r))
        .map((r) => `${r}: served but not in ROUTES (src/http/contract/)`),
      ...[...contract]
        .filter((r) => !served.has(r))
        .map((r) => `${r}: in ROUTES but the app does not serve it`),
      ...[...contract]
        .filter((r) => !documented.has(r))
        .map((r) => `${r}: not in docs/http-api.md: run npm run docs`),
      ...[...documented]
        .filter((r) => !contract.has(r))
        .map((r) => `${r}: in docs/http-api.md but no route: run npm run docs`),
    ];
    expect(problems).toEqual([]);
  });

  it('every route the hand-written pages name exists', () => {
    const contract = ROUTES.map((r) => ({
      method: r.method.toUpperCase(),
      pattern: new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}$`),
    }));
    const problems: string[] = [];
    for (const file of ['README.md', ...DOCS]) {
      const text = file === 'docs/http-api.md' ? read(file).split('<!-- BEGIN GENERATED')[0]! : read(file);
      for (const line of prose(text)) {
        for (const m of line.matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/[^\s`?]*)/g)) {
          // `:id` and `{id}` name a parameter; `/v1/jobs/:id/{pause,resume,run}` names three routes.
          const path = m[2]!.replace(/:(\w+)/g, '{$1}');
          const expanded = /\{(\w+,[\w,]+)\}/.exec(path);
          const all = expanded ? expanded[1]!.split(',').map((x) => path.replace(expanded[0], x)) : [path];
          for (const p of all) {
            const concrete = p.replace(/\{\w+\}/g, 'x');
            // GitHub's routes (`GET /app`, `GET /user`) and the web pages are not the API's.
            if (!OURS.test(p)) continue;
            if (!contract.some((r) => r.method === m[1] && r.pattern.test(concrete))) {
              problems.push(`${file}: \`${m[1]} ${m[2]}\` is no route of the API`);
            }
          }
        }
      }
    }
    expect(problems, 'fix the route (docs/http-api.md lists them all) or drop it').toEqual([]);
  });
});

// ---- notification events

describe('notification events', () => {
  it('every event has its row in docs/notifications.md, and the table names no other', () => {
    const page = read('docs/notifications.md');
    const rows = prose(page)
      .map((l) => /^\| `([a-z_]+\.[a-z_]+)` \|/.exec(l)?.[1])
      .filter((e): e is string => e !== undefined);
    const missing = NOTIFICATION_EVENTS.filter((e) => !rows.includes(e)).map(
      (e) =>
        `${e}: add a row "| \`${e}\` | when it is sent (and what its data holds) |" to the table of events in docs/notifications.md`,
    );
    const extra = rows
      .filter((e) => !(NOTIFICATION_EVENTS as readonly string[]).includes(e))
      .map(
        (e) =>
          `${e}: docs/notifications.md lists it, but NOTIFICATION_EVENTS (src/domain/notifications.ts) has no such event`,
      );
    expect([...missing, ...extra]).toEqual([]);
  });
});

// ---- the README and the links

describe('README.md and the links', () => {
  it('README.md stays at most 300 lines', () => {
    const lines = read('README.md').split('\n').length - 1;
    expect(
      lines,
      'README.md is longer than 300 lines: move detail to a page under docs/',
    ).toBeLessThanOrEqual(300);
  });

  it('every relative link of README.md and docs/*.md leads to a file and a heading that exist', () => {
    const problems: string[] = [];
    for (const file of ['README.md', ...DOCS]) {
      const lines = prose(read(file));
      lines.forEach((line, i) => {
        const bare = line.replace(/`[^`]*`/g, '');
        for (const m of bare.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1]!;
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          const [path, anchor] = target.split('#') as [string, string | undefined];
          const dest = path ? resolve(dirname(join(ROOT, file)), path) : join(ROOT, file);
          const where = `${file}:${i + 1}: ${target}`;
          if (!existsSync(dest)) {
            problems.push(`${where}: no file ${relative(ROOT, dest)}`);
            continue;
          }
          if (anchor && dest.endsWith('.md') && statSync(dest).isFile()) {
            if (!anchors(readFileSync(dest, 'utf8')).has(anchor)) {
              problems.push(`${where}: ${relative(ROOT, dest)} has no heading whose anchor is #${anchor}`);
            }
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });
});
