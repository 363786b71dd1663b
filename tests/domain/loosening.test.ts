import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import {
  type Latitude,
  latitudeOf,
  raisedOptions,
  refuseLoosening,
  STRICTEST,
} from '../../src/domain/loosening.js';
import { EXECUTE_MODES, ROLES } from '../../src/domain/types.js';

const JOB = { what: 'a job of session ses_1', than: 'than its session', label: 'session' };
/** What `network: true` stands for in these tests (execute.network_default_domains). */
const DEFAULTS = ['registry.npmjs.org', '*.github.com'];
const LOOSEST: Latitude = { execute_mode: 'auto', network: true, allow_self_approval: true };

describe('latitudeOf: what a run gets from its layers', () => {
  it('takes each option from the nearest layer that sets it, else the strictest', () => {
    expect(latitudeOf()).toEqual(STRICTEST);
    expect(latitudeOf({}, {})).toEqual({
      execute_mode: 'manual',
      network: false,
      allow_self_approval: false,
    });
    expect(latitudeOf({ execute_mode: 'edits' }, LOOSEST)).toEqual({ ...LOOSEST, execute_mode: 'edits' });
    expect(latitudeOf({}, { network: true })).toEqual({ ...STRICTEST, network: true });
    // false is a value, not an absence: a job that says "no network" is offline in a networked session.
    expect(latitudeOf({ network: false, allow_self_approval: false }, LOOSEST)).toEqual({
      execute_mode: 'auto',
      network: false,
      allow_self_approval: false,
    });
  });
});

describe('raisedOptions', () => {
  it('orders execute modes manual < edits < auto', () => {
    for (const [i, before] of EXECUTE_MODES.entries()) {
      for (const [j, after] of EXECUTE_MODES.entries()) {
        const raised = raisedOptions(
          { ...STRICTEST, execute_mode: before },
          { ...STRICTEST, execute_mode: after },
          DEFAULTS,
        );
        expect(raised, `${before} -> ${after}`).toEqual(j > i ? ['execute_mode'] : []);
      }
    }
  });

  it('counts any network and self-approval on as more than off, and equal or lower as no raise', () => {
    expect(raisedOptions(STRICTEST, LOOSEST, DEFAULTS)).toEqual([
      'execute_mode',
      'network',
      'allow_self_approval',
    ]);
    expect(raisedOptions(LOOSEST, STRICTEST, DEFAULTS)).toEqual([]);
    expect(raisedOptions(LOOSEST, LOOSEST, DEFAULTS)).toEqual([]);
    expect(raisedOptions(STRICTEST, { ...STRICTEST, network: true }, DEFAULTS)).toEqual(['network']);
    // Even while the default list is empty: true follows the list, which may grow.
    expect(raisedOptions(STRICTEST, { ...STRICTEST, network: true }, [])).toEqual(['network']);
  });

  it('counts a list of host names looser exactly when it allows a name the other does not', () => {
    const net = (before: Latitude['network'], after: Latitude['network']) =>
      raisedOptions({ ...STRICTEST, network: before }, { ...STRICTEST, network: after }, DEFAULTS);
    // false and [] are the strictest; any name is more.
    expect(net(false, [])).toEqual([]);
    expect(net([], false)).toEqual([]);
    expect(net(false, ['a.example'])).toEqual(['network']);
    expect(net([], ['a.example'])).toEqual(['network']);
    expect(net(['a.example'], false)).toEqual([]);
    // A subset, the same set in another order or case: no raise. A name more: a raise.
    expect(net(['a.example', 'b.example'], ['b.example'])).toEqual([]);
    expect(net(['a.example', 'b.example'], ['B.example', 'a.example'])).toEqual([]);
    expect(net(['a.example'], ['a.example', 'b.example'])).toEqual(['network']);
    // A wildcard allows every name below it, and narrower wildcards; not the name itself.
    expect(net(['*.github.com'], ['api.github.com', '*.x.github.com'])).toEqual([]);
    expect(net(['*.github.com'], ['github.com'])).toEqual(['network']);
    expect(net(['api.github.com'], ['*.github.com'])).toEqual(['network']);
    // true is the default list: a list within it is no raise, one beyond it is.
    expect(net(true, ['registry.npmjs.org', 'codeload.github.com'])).toEqual([]);
    expect(net(true, ['pypi.org'])).toEqual(['network']);
    expect(net(['registry.npmjs.org'], true)).toEqual(['network']);
    expect(net(DEFAULTS, true)).toEqual([]);
  });
});

describe('refuseLoosening', () => {
  it('lets an admin raise anything, and anyone lower or keep', () => {
    expect(() => refuseLoosening('admin', STRICTEST, LOOSEST, JOB, DEFAULTS)).not.toThrow();
    for (const role of ROLES) {
      expect(() => refuseLoosening(role, LOOSEST, STRICTEST, JOB, DEFAULTS)).not.toThrow();
      expect(() => refuseLoosening(role, LOOSEST, LOOSEST, JOB, DEFAULTS)).not.toThrow();
    }
  });

  it.each(ROLES.filter((r) => r !== 'admin'))(
    'refuses %s a raise with forbidden, naming each option and the value it would replace',
    (role) => {
      let thrown: unknown;
      try {
        refuseLoosening(role, { ...STRICTEST, execute_mode: 'edits' }, LOOSEST, JOB, DEFAULTS);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect(thrown).toMatchObject({
        code: 'forbidden',
        message:
          'only an admin may make a job of session ses_1 more permissive than its session: ' +
          'execute_mode auto (session: edits), network true (session: false), ' +
          `allow_self_approval true (session: false); role ${role} may set these equal or stricter, or leave them unset`,
      });
    },
  );
});

describe('refuseLoosening of a list of host names', () => {
  it('names the list asked for and the one it would replace', () => {
    expect(() =>
      refuseLoosening(
        'operator',
        { ...STRICTEST, network: ['registry.npmjs.org'] },
        { ...STRICTEST, network: ['registry.npmjs.org', 'evil.example'] },
        JOB,
        DEFAULTS,
      ),
    ).toThrow('network [registry.npmjs.org, evil.example] (session: [registry.npmjs.org])');
  });
});
