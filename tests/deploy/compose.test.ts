import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaultConfig, ENV_BINDINGS } from '../../src/config/load.js';

// compose.yaml (two replicas on one PostgreSQL database, README "Running several replicas") is read as
// Compose reads it: YAML 1.1 merge keys (<<) on. These tests keep its replicas consistent with each other,
// with the image and with the configuration's environment variables. They do not run Docker.

const root = new URL('../../', import.meta.url);
const compose = parse(readFileSync(fileURLToPath(new URL('compose.yaml', root)), 'utf8'), {
  merge: true,
}) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const dockerfile = readFileSync(fileURLToPath(new URL('Dockerfile', root)), 'utf8');

interface Service {
  build?: unknown;
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  ports?: string[];
}

const replicas = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const env = (s: Service) => s.environment ?? {};
/** The service's named-volume mounts, target path to volume name. */
const mounts = (s: Service) =>
  new Map(
    (s.volumes ?? []).map((v) => {
      const [source, target] = v.split(':');
      return [target!, source!];
    }),
  );
const dataDir = /DRYDOCK_DATA_DIR=(\S+)/.exec(dockerfile)?.[1];

describe('compose.yaml', () => {
  it('has two drydock replicas built from the Dockerfile', () => {
    expect(replicas.map(([name]) => name).sort()).toEqual(['drydock-a', 'drydock-b']);
  });

  it('gives both the same database and distinct replica ids', () => {
    const [a, b] = replicas.map(([, s]) => env(s));
    expect(a!.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(b!.DATABASE_URL).toBe(a!.DATABASE_URL);
    expect(a!.DRYDOCK_REPLICA_ID).toBeTruthy();
    expect(b!.DRYDOCK_REPLICA_ID).toBeTruthy();
    expect(b!.DRYDOCK_REPLICA_ID).not.toBe(a!.DRYDOCK_REPLICA_ID);
  });

  it("gives each replica its own volume at the image's data_dir, and one shared volume holding work_dir", () => {
    expect(dataDir).toBe('/data');
    const [a, b] = replicas.map(([, s]) => mounts(s));
    expect(a!.get(dataDir!)).toBeTruthy();
    expect(b!.get(dataDir!)).toBeTruthy();
    expect(b!.get(dataDir!)).not.toBe(a!.get(dataDir!));
    for (const [, s] of replicas) expect(env(s).DRYDOCK_DATA_DIR).toBeUndefined();

    const workDir = env(replicas[0]![1]).DRYDOCK_WORK_DIR!;
    expect(env(replicas[1]![1]).DRYDOCK_WORK_DIR).toBe(workDir);
    const shared = [...a!].filter(([target, volume]) => b!.get(target) === volume);
    expect(shared).toHaveLength(1);
    const [sharedPath, sharedVolume] = shared[0]!;
    expect(posix.relative(sharedPath, workDir)).not.toMatch(/^\.\.|^\/|^$/);
    for (const name of [sharedVolume, a!.get(dataDir!), b!.get(dataDir!)]) {
      expect(compose.volumes).toHaveProperty(name!);
    }
  });

  it('sets only environment variables the configuration reads', () => {
    const known = new Set([...ENV_BINDINGS.map((b) => b.source), 'DRYDOCK_CONFIG']);
    for (const [, s] of replicas) {
      for (const name of Object.keys(env(s))) expect(known, name).toContain(name);
    }
  });

  it('starts the replicas once PostgreSQL is healthy, and stops them after the shutdown grace', () => {
    const grace = defaultConfig().server.shutdown_grace_ms;
    for (const [, s] of replicas) {
      expect(s.depends_on?.postgres?.condition).toBe('service_healthy');
      const seconds = /^(\d+)s$/.exec(s.stop_grace_period ?? '')?.[1];
      expect(Number(seconds) * 1000).toBeGreaterThan(grace);
    }
    expect(compose.services.postgres).toBeDefined();
  });

  it('commits no password: POSTGRES_PASSWORD is required from the environment', () => {
    expect(env(compose.services.postgres!).POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
  });

  it('publishes the replicas on distinct host ports', () => {
    const hostPorts = replicas.map(([, s]) => s.ports?.[0]?.split(':')[0]);
    expect(new Set(hostPorts).size).toBe(2);
  });
});
