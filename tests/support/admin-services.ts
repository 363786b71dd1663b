import { expect } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { DomainError } from '../../src/domain/errors.js';
import type { NewJobRequest } from '../../src/scheduler/jobs.js';
import { createHarness, type Harness } from './harness.js';

/**
 * The daemon's services built through the composition root (not started), on a real SQLite file and a fake
 * clock, for tests of the administration services without HTTP: the API harness, whose `services` they call.
 * Runs submitted are collected in `runs`, not executed.
 */
export type AdminWorld = Harness;

export const adminWorld = (patch: (c: Config) => void = () => {}): Promise<AdminWorld> =>
  createHarness({ patch });

/** A daily job as the API would pass it to the jobs service, with `over` on top. */
export const job = (over: Partial<NewJobRequest> = {}): NewJobRequest => ({
  cron: '30 9 * * *',
  timezone: 'UTC',
  prompt: 'review the open pull requests',
  recurring: true,
  approximate: false,
  options: {},
  createdBy: 'ops',
  role: 'operator',
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
