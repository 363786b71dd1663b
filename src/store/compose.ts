import type { ApprovalStore } from './approvals.js';
import type { ReactionCursorStore } from './cursors.js';
import type { JobStore } from './jobs.js';
import type { OutboxStore } from './outbox.js';
import type { PlanStore } from './plans.js';
import type { RunStore } from './runs.js';
import type { SessionStore } from './sessions.js';
import type { StateStore } from './state.js';
import type { Store } from './store.js';
import type { TriggerStore } from './triggers.js';
import type { UsageStore } from './usage.js';
import type { WakeStore } from './wakes.js';

/** One implementation of each part of the Store, as a backend builds them over its database. */
export interface StoreParts {
  sessions: SessionStore;
  jobs: JobStore;
  runs: RunStore;
  approvals: ApprovalStore;
  plans: PlanStore;
  triggers: TriggerStore;
  outbox: OutboxStore;
  state: StateStore;
  wakes: WakeStore;
  cursors: ReactionCursorStore;
  usage: UsageStore;
}

/**
 * Puts a backend's parts together into one Store: every method of every part (its own function properties
 * and its prototypes' methods, `constructor` aside) is bound to its part and set on `onto` under its own
 * name. Each method has one owner: a name that two parts both have, or that `onto` has already, is
 * refused. Whatever a part exposes becomes a method of the store, so parts keep their helpers out of reach
 * (module functions, or members that are not functions).
 */
export function composeStore<T extends object = Record<never, never>>(
  parts: StoreParts,
  onto: T = {} as T,
): T & Store {
  const target = onto as Record<string, unknown>;
  const owners = new Map<string, string>();
  for (const [partName, part] of Object.entries(parts) as [string, object][]) {
    for (const [name, method] of methodsOf(part)) {
      const owner = owners.get(name);
      if (owner !== undefined) {
        throw new Error(`composeStore: ${name} is a method of both ${owner} and ${partName}`);
      }
      if (name in target) throw new Error(`composeStore: ${name} of ${partName} is on the store already`);
      owners.set(name, partName);
      target[name] = method.bind(part);
    }
  }
  return onto as T & Store;
}

type Method = (...args: unknown[]) => unknown;

/** A part's methods by name: the most derived one where a prototype overrides another. */
function methodsOf(part: object): Map<string, Method> {
  const found = new Map<string, Method>();
  for (let o: object | null = part; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor' || found.has(name)) continue;
      const { value } = Object.getOwnPropertyDescriptor(o, name)!;
      if (typeof value === 'function') found.set(name, value as Method);
    }
  }
  return found;
}
