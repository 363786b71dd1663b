import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongFilesFirst from './tests/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/support/global-setup.ts'],
    // A safety net against a test that hangs, not a measure of speed: on a machine loaded by other work a test
    // that starts several CLI processes or daemons can take many times its quiet time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most test files wait more than they compute (child processes, PostgreSQL, git, sockets): one file more
    // than the cores keeps them busy where vitest's default (one fewer than the cores: a single file at a time
    // on two) leaves them idle; more files than that, on a loaded machine, ran faster but timed out more.
    // `--maxWorkers N` on the command line overrides it.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LongFilesFirst },
  },
});
