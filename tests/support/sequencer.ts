import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The order test files start in. Vitest starts the files that took longest last time first, so that no long
// file starts last and runs on alone; a fresh clone has no last time, and vitest then starts the largest
// files first, which puts some of the longest (a small file that runs a whole contract, or starts daemons)
// at the very end. Files named here start first where vitest knows no duration for them, longest first.

/** The longest test files, longest first (one file at a time on 2 cores under load: 219 s down to 83 s). */
export const LONG_FILES: readonly string[] = [
  'tests/runs/replicas.test.ts',
  'tests/cli/client-admin.test.ts',
  'tests/cli/client.test.ts',
  'tests/store/postgres.test.ts',
  'tests/github/check-runs.test.ts',
  'tests/cli/client-apply.test.ts',
  'tests/cli/daemon.test.ts',
  'tests/workspace/hostile-tree.test.ts',
  'tests/triggers/clone-on-demand.test.ts',
];

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const path = relative(this.ctx.config.root, spec.moduleId);
      const known = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      const i = LONG_FILES.indexOf(path);
      return known || i < 0 ? LONG_FILES.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
