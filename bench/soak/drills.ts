import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import type { DrillContext } from './drill-context.js';
import { listenDrill } from './drill-listen.js';
import { type OutageFigures, outageDrill } from './drill-outage.js';
import { type DrillResults, report } from './drill-report.js';
import { stopDrill } from './drill-stop.js';
import { createApproverToken, makeRepo } from './fixtures.js';
import { startScriptedModel } from './model.js';
import type { SoakOptions } from './options.js';
import { allReady, makeReplicas, ReplicaSet } from './replicas.js';
import { ScratchCluster } from './scratch-postgres.js';
import { clock, secs } from './stats.js';

// The outage drills of issue 24 (`npm run bench:soak -- --drills`): two `drydock serve` replicas on a scratch
// PostgreSQL cluster, the scripted model answering after a few seconds so that faults land while runs wait
// on it, and four faults one after the other: a database restart, a database crash of 17 s, a replica frozen
// past its lease, a cut LISTEN connection. Each drill waits until its runs ended before the next begins.
// Figures, not checks: the exit status is 0 unless the harness itself failed. See README.md "Outage drills".

function log(line: string): void {
  process.stderr.write(`drills: ${line}\n`);
}

const APPROVER = 'drill-approver';
/** The model's answers come --model-delay-ms (2 s) to this much later after the request. */
const DELAY_SPREAD_MS = 2_000;

export async function runDrills(opts: SoakOptions): Promise<number> {
  const started = Date.now();
  const cli = join(packageRoot(), 'dist/src/cli/main.js');
  const dir = mkdtempSync(join(tmpdir(), 'drydock-drills-'));
  const cluster = new ScratchCluster('drills');
  let set: ReplicaSet | null = null;
  let model: Awaited<ReturnType<typeof startScriptedModel>> | null = null;
  // Ctrl-C or a kill: take the replicas (a frozen one too: SIGKILL ends it) and the cluster down with it.
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the replicas and dropping the scratch cluster`);
    set?.close();
    cluster.drop();
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  };
  const dropOnExit = () => cluster.drop();
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('exit', dropOnExit);
  try {
    const workspace = join(dir, 'workspace');
    makeRepo(workspace);
    const modelDelay = { baseMs: opts.modelDelayMs, spreadMs: DELAY_SPREAD_MS };
    let answers = 0;
    model = await startScriptedModel(
      Number.MAX_SAFE_INTEGER,
      () => modelDelay.baseMs + ((answers++ % 8) / 7) * modelDelay.spreadMs,
    );
    await cluster.start();
    log(
      `scratch PostgreSQL ${cluster.major} cluster ${cluster.name} on port ${cluster.port}; data in ${dir}`,
    );
    const configFile = join(dir, 'drydock.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        timezone: 'UTC',
        server: { shutdown_grace_ms: 10_000 },
        runs: { max_concurrent: 8, lease_ms: opts.leaseMs },
      }),
    );
    const adminToken = `drill-admin-${randomBytes(16).toString('hex')}`;
    const replicas = await makeReplicas({
      cli,
      dir,
      count: 2,
      separate: true,
      nodeArgs: [],
      origin: started,
      sampleEveryMs: 5_000,
      env: {
        DRYDOCK_CONFIG: configFile,
        DRYDOCK_ADMIN_TOKEN: adminToken,
        // info: 'run finished' and 'run taken over' lines; warnings and errors are what the drills count.
        DRYDOCK_LOG_LEVEL: 'info',
        ANTHROPIC_BASE_URL: model.server.url,
        DATABASE_URL: cluster.url,
        DRYDOCK_WORK_DIR: join(dir, 'work'),
      },
    });
    const approver = createApproverToken(cli, replicas[0]!.env, APPROVER);
    set = new ReplicaSet(replicas);
    for (const [i, life] of (await set.startAll()).entries()) {
      log(
        `${replicas[i]!.id} up (pid ${life.pid}) on ${replicas[i]!.url} in ${secs(life.readyAt - life.spawnedAt)}`,
      );
    }
    const ctx: DrillContext = {
      cluster,
      replicas,
      model,
      tokens: { admin: adminToken, approver },
      workspace,
      modelDelay,
      leaseMs: opts.leaseMs ?? 6_000,
      log,
    };
    const results = await sequence(ctx, opts);
    const lasts = await set.stopAll();
    const wallMs = Date.now() - started;
    process.stdout.write(
      `${report(results, {
        header: [
          `outage drills (issue 24): 2 drydock serve replicas on a scratch PostgreSQL ${cluster.major}, ` +
            `runs.lease_ms ${ctx.leaseMs}, runs.max_concurrent 8, the scripted model answering ${secs(modelDelay.baseMs)} to ${secs(modelDelay.baseMs + DELAY_SPREAD_MS)} after a request`,
          `node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs; ` +
            `wall time ${clock(wallMs)} (m:ss); final SIGTERM: ${lasts.map((l, i) => `${replicas[i]!.id} exit code ${l.exitCode}`).join(', ')}`,
        ],
      }).join('\n')}\n`,
    );
    return 0;
  } finally {
    set?.close();
    await model?.server.close();
    cluster.drop();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    process.off('exit', dropOnExit);
    if (opts.keep) log(`kept ${dir} (the replicas' logs: daemon-replica-a.log, daemon-replica-b.log)`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** The drills --only names, in their order; each starts with both replicas ready. */
async function sequence(ctx: DrillContext, opts: SoakOptions): Promise<DrillResults> {
  const results: DrillResults = { outages: [] as OutageFigures[], stop: null, listen: null };
  for (const name of opts.only) {
    if ((await allReady(ctx.replicas, 60_000)) === null)
      throw new Error(`drill ${name}: a replica is not ready`);
    const t0 = Date.now();
    log(`${name}: begins`);
    if (name === 'restart')
      results.outages.push(await outageDrill(ctx, { name, mode: 'fast', downMs: 2_000 }));
    if (name === 'crash')
      results.outages.push(await outageDrill(ctx, { name, mode: 'immediate', downMs: 17_000 }));
    if (name === 'stop') results.stop = await stopDrill(ctx);
    if (name === 'listen') results.listen = await listenDrill(ctx);
    log(`${name}: done in ${secs(Date.now() - t0)}`);
  }
  return results;
}
