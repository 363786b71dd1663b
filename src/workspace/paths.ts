import { join } from 'node:path';
import type { Config } from '../config/schema.js';

// Where drydock's own working copies live: `<work root>/worktrees/<plan id>` (an approved plan's execution)
// and `<work root>/checkouts/<run id>` (a pull request run's checkout). The work root is `work_dir`, or
// `data_dir` when it is not set; replicas of one daemon share it (a shared volume), as a run may continue on
// another replica.

/** The directory that holds `worktrees/` and `checkouts/`. */
export const workRoot = (config: Pick<Config, 'data_dir' | 'work_dir'>): string =>
  config.work_dir ?? config.data_dir;

export const worktreesDir = (root: string): string => join(root, 'worktrees');

export const worktreePath = (root: string, planId: string): string => join(worktreesDir(root), planId);

export const checkoutsDir = (root: string): string => join(root, 'checkouts');

export const checkoutPath = (root: string, runId: string): string => join(checkoutsDir(root), runId);

/**
 * `<work root>/scratch/<plan id>`: the index and objects git writes, in the sandbox, while it commits an
 * execution's tree (see `commitExecution`); made and removed around that.
 */
export const scratchPath = (root: string, planId: string): string => join(root, 'scratch', planId);
