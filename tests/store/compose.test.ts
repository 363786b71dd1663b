import { describe, expect, it } from 'vitest';
import { composeStore, type StoreParts } from '../../src/store/compose.js';

// composeStore only looks at the parts at run time; these stand-ins hold a few methods each, so the full
// StoreParts type is waived here (the backends' own parts are held to it by the type checker).
function parts(given: Partial<Record<keyof StoreParts, object>>): StoreParts {
  const empty = {
    sessions: {},
    jobs: {},
    runs: {},
    approvals: {},
    plans: {},
    triggers: {},
    deliveries: {},
    state: {},
    wakes: {},
  };
  return { ...empty, ...given } as unknown as StoreParts;
}

class Counter {
  private count = 0;
  async bump(): Promise<number> {
    this.count += 1;
    return this.count;
  }
}

class Jobs extends Counter {
  async getJob(id: string): Promise<string> {
    return `job ${id}`;
  }
}

describe('composeStore', () => {
  it('binds every method to its part: prototype methods, inherited ones and own function properties', async () => {
    const jobs = new Jobs();
    const store = composeStore(parts({ jobs, state: { getState: async (key: string) => `state ${key}` } }));
    const { bump, getJob } = store as unknown as Jobs;
    expect(await bump()).toBe(1);
    expect(await bump()).toBe(2);
    expect(await jobs.bump()).toBe(3);
    expect(await getJob('a')).toBe('job a');
    expect(await store.getState('k')).toBe('state k');
    expect(Object.keys(store).sort()).toEqual(['bump', 'getJob', 'getState']);
  });

  it('leaves out constructors, accessors and members that are not functions', () => {
    class Runs {
      readonly table = 'runs';
      get size(): number {
        return 0;
      }
      async getRun(): Promise<null> {
        return null;
      }
    }
    const store = composeStore(parts({ runs: new Runs() }));
    expect(Object.keys(store)).toEqual(['getRun']);
  });

  it('refuses a method that two parts both have', () => {
    expect(() => composeStore(parts({ sessions: new Jobs(), jobs: new Jobs() }))).toThrow(
      'composeStore: getJob is a method of both sessions and jobs',
    );
  });

  it('puts the methods on the given object, refusing a name it has already', () => {
    class Host {
      migrateNow(): number[] {
        return [];
      }
    }
    const host = composeStore(parts({ jobs: new Jobs() }), new Host());
    expect(host).toBeInstanceOf(Host);
    expect(typeof (host as unknown as Jobs).getJob).toBe('function');
    expect(() => composeStore(parts({ state: new Host() }), new Host())).toThrow(
      'composeStore: migrateNow of state is on the store already',
    );
  });
});
