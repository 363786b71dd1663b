import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Tests that spawn the CLI run the compiled output: build once before any test file runs. Type errors are
// the type-check step's business (`npm test` runs it first); tsc still emits, and that output is what the
// process tests need.
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const r = spawnSync(
    process.execPath,
    [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.json`],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (!existsSync(`${root}/dist/src/cli/main.js`)) {
    throw new Error(`the build produced no dist/src/cli/main.js (tsc exit ${r.status})`);
  }
}
