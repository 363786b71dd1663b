import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaultConfig, ENV_BINDINGS, loadConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';

// config/drydock.example.yaml is the documentation of every key and its default. These tests keep
// it from drifting away from the schema.

const examplePath = fileURLToPath(new URL('../../config/drydock.example.yaml', import.meta.url));
const exampleText = readFileSync(examplePath, 'utf8');

/** The parts of a zod 4 schema definition needed to walk the configuration's keys. */
interface SchemaDef {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  out?: unknown;
  valueType?: unknown;
}

function defOf(schema: unknown): SchemaDef {
  return (schema as { _zod: { def: SchemaDef } })._zod.def;
}

/**
 * Every key path the schema accepts (sections and leaves). A record (pricing) contributes its
 * default entries, each with every field of the entry schema.
 */
function schemaKeyPaths(
  schema: unknown,
  prefix: string[],
  recordKeys: (path: string[]) => string[],
): string[] {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      return Object.entries(def.shape ?? {}).flatMap(([key, child]) => [
        [...prefix, key].join('.'),
        ...schemaKeyPaths(child, [...prefix, key], recordKeys),
      ]);
    case 'record':
      return recordKeys(prefix).flatMap((key) => [
        [...prefix, key].join('.'),
        ...schemaKeyPaths(def.valueType, [...prefix, key], recordKeys),
      ]);
    case 'default':
    case 'prefault':
    case 'nullable':
    case 'optional':
      return schemaKeyPaths(def.innerType, prefix, recordKeys);
    case 'pipe':
      return [
        ...new Set([
          ...schemaKeyPaths(def.in, prefix, recordKeys),
          ...schemaKeyPaths(def.out, prefix, recordKeys),
        ]),
      ];
    default:
      return [];
  }
}

function valueKeyPaths(value: unknown, prefix: string[] = []): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [
    [...prefix, key].join('.'),
    ...valueKeyPaths(child, [...prefix, key]),
  ]);
}

describe('config/drydock.example.yaml', () => {
  it('parses to exactly the defaults', () => {
    const raw = parse(exampleText) as Record<string, unknown>;
    // The example documents timezone as null: "the system's local zone", which defaultConfig resolves.
    expect(raw.timezone).toBeNull();
    expect({ ...raw, timezone: defaultConfig().timezone }).toEqual(defaultConfig());
  });

  it('loads to exactly the defaults', () => {
    // Relative paths (data_dir) resolve against the directory the daemon starts in.
    expect(loadConfig({ configPath: examplePath, env: {}, baseDir: '/srv/drydock' })).toEqual({
      ...defaultConfig(),
      data_dir: '/srv/drydock/data',
    });
  });

  it('lists every key of the schema, and no other', () => {
    const defaults = defaultConfig();
    const schemaPaths = schemaKeyPaths(configSchema, [], (path) => {
      // Records are empty by default (documented by example in comments). If another record appears, decide
      // how to document it.
      expect(['github.repositories', 'github.users', 'pricing', 'models', 'mcp.servers']).toContain(
        path.join('.'),
      );
      return [];
    });
    expect(schemaPaths).toContain('server.port');
    expect(schemaPaths).toContain('scheduler.jitter.one_shot_early_ms');
    expect(schemaPaths).toContain('anthropic.turn_retry_max_ms');
    const examplePaths = valueKeyPaths(parse(exampleText));
    expect([...examplePaths].sort()).toEqual([...schemaPaths].sort());
    // The defaults have the same shape, so the schema walk above missed nothing.
    expect([...valueKeyPaths(defaults)].sort()).toEqual([...schemaPaths].sort());
  });

  it('documents every key with a comment right above it', () => {
    const lines = exampleText.split('\n');
    const undocumented = lines.flatMap((line, i) => {
      if (!/^\s*[\w-]+:/.test(line)) return [];
      const above = lines[i - 1] ?? '';
      return /^\s*#/.test(above) ? [] : [`line ${i + 1}: ${line.trim()}`];
    });
    expect(undocumented).toEqual([]);
  });

  it('names every environment variable and flag', () => {
    for (const name of ['DRYDOCK_CONFIG', ...ENV_BINDINGS.map((binding) => binding.source)]) {
      expect(exampleText).toContain(name);
    }
    for (const flag of ['--config', '--port', '--data-dir', '--host']) expect(exampleText).toContain(flag);
  });
});
