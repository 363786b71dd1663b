import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApplyDocument } from '../../src/cli/apply/document.js';
import { JOB_FIELDS, SESSION_FIELDS, TRIGGER_FIELDS } from '../../src/cli/apply/export.js';
import { applySchemaText } from '../../src/cli/commands/apply.js';
import {
  applyDocumentSchema,
  createJobSchema,
  createSessionSchema,
  createTriggerSchema,
  fileSessionSchema,
} from '../../src/http/contract/index.js';
import { packageRoot } from '../../src/paths.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { runCli } from './cli-process.js';

// The file format of `drydock apply` and `drydock export` held to the API's create schemas: every field of a
// create schema is either exported or listed as not exported (a field added later cannot be silently dropped
// from export), and the published JSON Schema is the one the code makes.

describe('the export mappings cover every field of the create schemas', () => {
  it.each([
    ['POST /v1/sessions', createSessionSchema, SESSION_FIELDS],
    ['POST /v1/sessions/:id/jobs', createJobSchema, JOB_FIELDS],
    ['POST /v1/triggers', createTriggerSchema, TRIGGER_FIELDS],
  ])('%s', (_route, schema, mapping) => {
    // A field of the schema with no entry in the mapping is dropped by export: add it there (read it from the
    // presented object, or mark it { notExported: 'why' }).
    expect(Object.keys(mapping).sort()).toEqual(Object.keys(schema.shape).sort());
  });

  it("the file's objects are the create schemas' (plus a session's jobs)", () => {
    expect(Object.keys(fileSessionSchema.shape).sort()).toEqual(
      [...Object.keys(createSessionSchema.shape), 'jobs'].sort(),
    );
    // A field another change adds to a create schema reaches the file without touching it.
    const extended = createJobSchema.extend({ overlap: createJobSchema.shape.prompt.optional() });
    expect(Object.keys(extended.shape)).toContain('overlap');
    const parsed = applyDocumentSchema.safeParse({
      apiVersion: 'drydock/v1',
      sessions: [{ name: 's', workspace: '/w', jobs: [{ cron: '* * * * *', prompt: 'p' }] }],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['sessions', 0, 'jobs', 0, 'name']);
  });
});

describe("docs/apply.md's example file", () => {
  it('is a valid file, and names no field the create schemas lack', () => {
    const page = readFileSync(join(packageRoot(), 'docs', 'apply.md'), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(page)?.[1];
    expect(example).toBeDefined();
    const doc = parseApplyDocument(example!, 'docs/apply.md');
    expect(doc.sessions?.[0]?.jobs?.map((j) => j.name)).toEqual(['review', 'deps']);
    expect(doc.triggers?.map((t) => t.kind)).toEqual(['github', 'generic', 'schedule']);
  });
});

describe('the published JSON Schema', () => {
  const file = join(packageRoot(), 'schemas/drydock.schema.json');

  it('schemas/drydock.schema.json is what the code makes (regenerate: npm run schema)', () => {
    expect(readFileSync(file, 'utf8')).toBe(applySchemaText());
  });

  it('`drydock apply --print-schema` prints it without a daemon or token', async () => {
    const r = await runCli(['apply', '--print-schema']);
    expect(r).toEqual({ code: 0, stdout: readFileSync(file, 'utf8'), stderr: '' });
  });

  describe('served', () => {
    let d: TestDaemon;
    beforeAll(async () => {
      d = await startTestDaemon({});
    });
    afterAll(async () => {
      await d?.stop();
    });

    it('GET /v1/schema/apply answers it without a token', async () => {
      const res = await fetch(`${d.daemon.url}/v1/schema/apply`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    });
  });
});
