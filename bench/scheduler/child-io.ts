// What the scheduler benchmark's children need beyond bench/shared/child-io.ts: a one-off order, a wait for
// a wall-clock instant, and CPU time split into user and system.

import * as shared from '../shared/child-io.js';
import type { ChildMessage } from './protocol.js';

export { childParams, fail, maxRssBytes } from '../shared/child-io.js';
export const report: (message: ChildMessage) => Promise<void> = shared.report;
export const finish: (message: ChildMessage) => Promise<never> = shared.finish;

export function receive<T extends { type: string }>(type: T['type']): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: T) => {
      if (message?.type !== type) return;
      process.off('message', onMessage);
      resolve(message);
    };
    process.on('message', onMessage);
  });
}

/** One timer that wakes at `at` (ms since the epoch), or right away if that has passed. */
export function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}

export function cpuMs(usage: NodeJS.CpuUsage): { userMs: number; systemMs: number } {
  return { userMs: usage.user / 1000, systemMs: usage.system / 1000 };
}
