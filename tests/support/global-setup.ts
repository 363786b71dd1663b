import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type FreshDatabase, freshDatabase, postgresUnavailable, TEMPLATE_ENV } from './postgres.js';

// Before any test file runs: the build the process tests run, and the migrated PostgreSQL database the
// PostgreSQL suites copy theirs from (CREATE DATABASE ... TEMPLATE) instead of migrating each one.
export default async function setup(): Promise<() => Promise<void>> {
  build();
  const template = await migratedTemplate();
  return async () => {
    await template?.drop();
  };
}

/**
 * Tests that spawn the CLI run the compiled output: built once here. Type errors are the type-check step's
 * business (`npm test` runs it first); tsc still emits, and that output is what the process tests need. With
 * DRYDOCK_TEST_BUILT=1 the caller has just built it (CI's type-check is that build) and it is not built again.
 */
function build(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  let status: number | null = 0;
  if (process.env.DRYDOCK_TEST_BUILT !== '1') {
    status = spawnSync(
      process.execPath,
      [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.json`],
      { cwd: root, stdio: 'inherit' },
    ).status;
  }
  if (!existsSync(`${root}/dist/src/cli/main.js`)) {
    throw new Error(`the build produced no dist/src/cli/main.js (tsc exit ${status})`);
  }
}

/**
 * A database the PostgreSQL store has migrated, named to the test files in TEMPLATE_ENV (the workers inherit
 * this process's environment); none when no server answers (the suites then skip or fail on their own).
 */
async function migratedTemplate(): Promise<FreshDatabase | null> {
  if ((await postgresUnavailable()) !== null) return null;
  const template = await freshDatabase({ prefix: 'drydock_template' });
  try {
    const { openPostgresStore } = await import('../../src/store/postgres/index.js');
    // No session may stay on a template while it is copied: the store is closed before any test runs.
    const store = await openPostgresStore({ url: template.url });
    await store.close();
  } catch (err) {
    await template.drop();
    throw err;
  }
  process.env[TEMPLATE_ENV] = template.name;
  return template;
}
