import { DomainError } from './errors.js';
import { domainsAdded, type NetworkSetting, networkDomains } from './network.js';
import { EXECUTE_MODES, type ExecuteMode, type Role, type RunDefaults } from './types.js';

// Who may loosen what. Three run options decide how much an execution does without a person watching:
// execute_mode (manual < edits < auto), network (the host names commands may reach: a list that allows a name
// another does not is looser; false, unset and [] are the strictest) and allow_self_approval (off < on).
//
// The invariant: only an admin makes something that exists more permissive. A job may not allow more than
// its session (the session is the policy of the jobs in it, whoever made it); a trigger may not be changed to
// allow more than it does. Lowering, and leaving an option unset so that it inherits, is always allowed. A
// new session or trigger starts where its creator sets it, and records who that was (owner, created_by).

/** The options this rule is about. */
export const LOOSENABLE = ['execute_mode', 'network', 'allow_self_approval'] as const;
export type Loosenable = (typeof LOOSENABLE)[number];

/** Those options as a run gets them, every one decided. */
export interface Latitude {
  execute_mode: ExecuteMode;
  /** As set (true: the configured default list; see network.ts). */
  network: NetworkSetting;
  allow_self_approval: boolean;
}

/** What a run gets when neither its job (or trigger) nor its session sets an option: the strictest. */
export const STRICTEST: Readonly<Latitude> = {
  execute_mode: 'manual',
  network: false,
  allow_self_approval: false,
};

/**
 * The latitude a run gets from its layers, nearest first (a job's or trigger's options, then its session's
 * defaults): each option from the first layer that sets it, else the strictest.
 */
export function latitudeOf(...layers: RunDefaults[]): Latitude {
  const pick = <K extends Loosenable>(key: K): Latitude[K] =>
    (layers.find((l) => l[key] !== undefined)?.[key] as Latitude[K] | undefined) ?? STRICTEST[key];
  return {
    execute_mode: pick('execute_mode'),
    network: pick('network'),
    allow_self_approval: pick('allow_self_approval'),
  };
}

/**
 * Whether `after` allows more than `before`, per option. Network: a list with a name `before` does not allow
 * (`true` read as `networkDefaults`, the configured execute.network_default_domains); `*.x` allows every name
 * below x. Turning `true` on from off is a raise even while the default list is empty: it would follow the list.
 */
type Looser<K extends Loosenable> = (
  before: Latitude[K],
  after: Latitude[K],
  defaults: readonly string[],
) => boolean;
const LOOSER: { [K in Loosenable]: Looser<K> } = {
  execute_mode: (before, after) => EXECUTE_MODES.indexOf(after) > EXECUTE_MODES.indexOf(before),
  network: (before, after, defaults) =>
    (after === true && (before === false || (Array.isArray(before) && before.length === 0))) ||
    domainsAdded(networkDomains(before, defaults), networkDomains(after, defaults)).length > 0,
  allow_self_approval: (before, after) => after && !before,
};

/** The options `after` allows more than `before`, in LOOSENABLE order; `networkDefaults` is what `true` means. */
export function raisedOptions(
  before: Latitude,
  after: Latitude,
  networkDefaults: readonly string[],
): Loosenable[] {
  return LOOSENABLE.filter((k) =>
    (LOOSER[k] as Looser<Loosenable>)(before[k] as never, after[k] as never, networkDefaults),
  );
}

/** An option's value in a refusal: a list of names as `[a, b]`, anything else as it is. */
const shown = (value: Latitude[Loosenable]): string =>
  Array.isArray(value) ? `[${value.join(', ')}]` : String(value);

/** What is being loosened, for the refusal's words. */
export interface LooseningSubject {
  /** "a job of session ses_1", "trigger trg_1". */
  what: string;
  /** "than its session ses_1", "than it is". */
  than: string;
  /** How the reference value is labelled: "session", "now". */
  label: string;
}

/**
 * Refuses (forbidden) a caller other than an admin whose `after` allows more than `before`; the message
 * names each option raised, with the value it would replace.
 */
export function refuseLoosening(
  role: Role,
  before: Latitude,
  after: Latitude,
  s: LooseningSubject,
  networkDefaults: readonly string[],
): void {
  if (role === 'admin') return;
  const raised = raisedOptions(before, after, networkDefaults);
  if (!raised.length) return;
  const named = raised.map((k) => `${k} ${shown(after[k])} (${s.label}: ${shown(before[k])})`).join(', ');
  throw new DomainError(
    'forbidden',
    `only an admin may make ${s.what} more permissive ${s.than}: ${named}; role ${role} may set these equal or stricter, or leave them unset`,
  );
}
