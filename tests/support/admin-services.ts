import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { DomainError } from '../../src/domain/errors.js';
import type { Run } from '../../src/domain/types.js';
import { silentLogger } from '../../src/logger.js';
import type { NewJobRequest } from '../../src/scheduler/jobs.js';
import { buildServices, type Services } from '../../src/services.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeClock } from './fake-clock.js';
import { noAgentExecutor, T0, tempDir, testConfig } from './harness.js';

/**
 * The daemon's services built through the composition root (not started), on a real SQLite file and a fake
 * clock, for tests of the administration services without HTTP. Runs submitted are collected, not executed.
 */
export interface AdminWorld {
  services: Services;
  store: SqliteStore;
  clock: FakeClock;
  config: Config;
  /** An existing directory to name as a workspace. */
  workspace: string;
  runs: Run[];
  close(): Promise<void>;
}

export async function adminWorld(patch: (c: Config) => void = () => {}): Promise<AdminWorld> {
  const tmp = tempDir('drydock-admin-');
  const config = testConfig(join(tmp.path, 'data'), patch);
  const clock = new FakeClock(T0);
  const store = new SqliteStore({ file: join(config.data_dir, 'drydock.db'), now: () => clock.now() });
  const workspace = join(tmp.path, 'workspace');
  mkdirSync(workspace);
  const runs: Run[] = [];
  const services = await buildServices({
    config,
    logger: silentLogger(),
    store,
    clock,
    executor: noAgentExecutor,
    sandbox: null,
    maxConcurrent: 1,
    submitRun: (run) => runs.push(run),
  });
  return {
    services,
    store,
    clock,
    config,
    workspace,
    runs,
    async close() {
      await store.close();
      tmp.remove();
    },
  };
}

/** A daily job as the API would pass it to the jobs service, with `over` on top. */
export const job = (over: Partial<NewJobRequest> = {}): NewJobRequest => ({
  cron: '30 9 * * *',
  timezone: 'UTC',
  prompt: 'review the open pull requests',
  recurring: true,
  approximate: false,
  options: {},
  createdBy: 'ops',
  ...over,
});

/** The DomainError a refused call rejects with (fails the test when it resolves or rejects otherwise). */
export const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
};
