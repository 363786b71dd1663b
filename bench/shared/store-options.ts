import { OptionsError } from './options.js';

// `--store sqlite|postgres|both` and `--postgres-url`, read the same way by every benchmark that can run drydock
// on either store (scheduler, webhooks, queue). With `both`, SQLite first, then PostgreSQL, one after the other.

export type StoreKind = 'sqlite' | 'postgres';
export type StoreChoice = StoreKind | 'both';

const STORE_CHOICES: readonly StoreChoice[] = ['sqlite', 'postgres', 'both'];

export const STORE_LABEL: Record<StoreKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** The PostgreSQL server's maintenance database, on which a benchmark creates (and drops) its own. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The flags this reads: each benchmark adds them to those it knows. */
export const STORE_FLAGS = ['--store', '--postgres-url'] as const;

export interface StoreOptions {
  /** Which store(s) drydock runs on (default sqlite). */
  store: StoreChoice;
  /** The server's maintenance database (default DEFAULT_POSTGRES_URL). */
  postgresUrl: string;
}

/** The stores a run measures drydock on, in order. */
export function storesOf(choice: StoreChoice): StoreKind[] {
  return choice === 'both' ? ['sqlite', 'postgres'] : [choice];
}

/** --store (BENCH_STORE) and --postgres-url (BENCH_POSTGRES_URL): flags win over the environment. */
export function readStoreOptions(
  flags: ReadonlyMap<string, string | true>,
  env: NodeJS.ProcessEnv,
): StoreOptions {
  return {
    store: storeChoice(flags.get('--store') ?? env.BENCH_STORE),
    postgresUrl: postgresUrl(flags.get('--postgres-url') ?? env.BENCH_POSTGRES_URL),
  };
}

function storeChoice(raw: string | true | undefined): StoreChoice {
  if (raw === undefined || raw === '') return 'sqlite';
  const found = STORE_CHOICES.find((c) => c === raw);
  if (!found) {
    throw new OptionsError(`--store (BENCH_STORE): expected ${STORE_CHOICES.join(', ')}, got ${String(raw)}`);
  }
  return found;
}

function postgresUrl(raw: string | true | undefined): string {
  if (raw === undefined || raw === '') return DEFAULT_POSTGRES_URL;
  const ok = typeof raw === 'string' && /^postgres(ql)?:\/\//.test(raw) && URL.canParse(raw);
  // Not echoed: a URL may carry a password.
  if (!ok) throw new OptionsError('--postgres-url (BENCH_POSTGRES_URL): expected a postgres:// URL');
  return raw;
}
