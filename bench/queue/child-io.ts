import * as shared from '../shared/child-io.js';
import type { ChildMessage } from './protocol.js';

// bench/shared/child-io.ts, with reports typed by this benchmark's protocol.

export { childParams, cpuMs, fail, maxRssBytes, onOrders } from '../shared/child-io.js';
export const report: (message: ChildMessage) => Promise<void> = shared.report;
export const finish: (message: ChildMessage) => Promise<never> = shared.finish;
