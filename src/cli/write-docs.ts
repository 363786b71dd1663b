import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultConfig } from '../config/load.js';
import { configSchema } from '../config/schema.js';
import { openApiDocument } from '../http/openapi.js';
import { cliReference, configKeys, configReference, httpReference, withGenerated } from './reference.js';

// `npm run docs`: writes the generated parts of docs/cli.md, docs/http-api.md and docs/configuration.md
// (src/cli/reference.ts) from the command definitions, the OpenAPI document and the configuration schema.
// Run from the repository's root; tests/docs/reference.test.ts fails while a page differs from what this
// writes.

/** The generated pages' texts as this build writes them, by path under `root`. */
export function generatedPages(root: string): Record<string, string> {
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  const example = read('config/drydock.example.yaml');
  // The version is left out of the page, so that a release does not change it.
  const http = httpReference(openApiDocument('VERSION'));
  const keys = configKeys(configSchema, defaultConfig(), example);
  return {
    'docs/cli.md': withGenerated(read('docs/cli.md'), cliReference(), 'docs/cli.md'),
    'docs/http-api.md': withGenerated(read('docs/http-api.md'), http, 'docs/http-api.md'),
    'docs/configuration.md': withGenerated(
      read('docs/configuration.md'),
      configReference(keys),
      'docs/configuration.md',
    ),
  };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const root = process.cwd();
  for (const [path, text] of Object.entries(generatedPages(root))) {
    const before = readFileSync(join(root, path), 'utf8');
    writeFileSync(join(root, path), text);
    process.stdout.write(`${path}: ${before === text ? 'unchanged' : 'written'}\n`);
  }
}
