import { shownUrl } from '../../src/store/open.js';
import { type FreshDatabase, freshDatabase } from '../../tests/support/postgres.js';

// A benchmark's own PostgreSQL database: created empty under a unique name
// (`drydock_bench_<bench>_<pid>_<time>_<n>`) on the server of --postgres-url, dropped by the benchmark at the
// end unless --keep. freshDatabase (tests/support/postgres.ts) does the CREATE and the DROP ... WITH (FORCE).

export type { FreshDatabase } from '../../tests/support/postgres.js';

/** An empty database on the server at `serverUrl` (whose own database is only connected to). */
export async function createBenchDatabase(serverUrl: string, bench: string): Promise<FreshDatabase> {
  try {
    return await freshDatabase({ server: serverUrl, prefix: `drydock_bench_${bench}` });
  } catch (err) {
    throw new Error(
      `bench: cannot create a database on ${shownUrl(serverUrl)}: ${(err as Error).message || String(err)}`,
    );
  }
}
