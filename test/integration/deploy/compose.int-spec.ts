import { PATH_METADATA } from '@nestjs/common/constants';
import { getMetadataStorage } from 'class-validator';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDialogueEndpoints, readEventBroker } from 'src/modules/engine/endpoints';
import { readStoreEndpoints } from 'src/modules/tracker';
import { EnvSchema } from 'src/platform/config/env.schema';
import { remoteStorageSettings } from 'src/platform/config/remote-storage-settings';
import { HealthController } from 'src/platform/health/health.controller';
import { parse } from 'yaml';

/**
 * The multi-instance Docker setup (docker-compose.yml, Dockerfile, deploy/) cannot run on a
 * machine without Docker; these checks keep it from rotting: its structure, the health route it
 * probes, and every variable it hands Parley being one Parley reads.
 */
const ROOT = join(__dirname, '..', '..', '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  deploy?: { replicas?: number };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  ports?: string[];
}
const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service> };
const services = compose.services;
function svc(name: string): Service {
  const service = services[name];
  if (service === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return service;
}
const parley = svc('parley');
const env: Record<string, string | undefined> = parley.environment ?? {};
const endpointsText = read('deploy/endpoints.yml');
const endpoints = parse(endpointsText) as Record<string, Record<string, unknown> | undefined>;
const entry = (key: string): Record<string, unknown> => endpoints[key] ?? {};

/** Variables Parley's start-up validation reads (EnvSchema) and remote storage reads. */
function variablesParleyReads(): Set<string> {
  const names = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(EnvSchema, '', true, false)
      .map((m) => m.propertyName),
  );
  remoteStorageSettings(
    new Proxy(
      {},
      {
        get: (_t, key) => {
          if (typeof key === 'string') names.add(key);
          return undefined;
        },
      },
    ),
  );
  return names;
}

/** `${VAR}` names deploy/endpoints.yml takes from the environment. */
const endpointVariables = [
  ...endpointsText.replace(/#.*$/gm, '').matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g),
].map((m) => m[1] ?? '');

/** The host of a URL-valued setting (compose's `${VAR:-default}` left as is). */
const hostOf = (url: string): string => new URL(url.replace(/\$\{[^}]*\}/g, 'x')).hostname;

describe('docker-compose.yml (multi-instance)', () => {
  it('runs three replicas of the image built from the Dockerfile', () => {
    expect(parley.build).toBe('.');
    expect(parley.deploy?.replicas).toBe(3);
    // Replicas share no host port: only the load balancer publishes one.
    expect(parley.ports).toBeUndefined();
  });

  it('puts a round-robin load balancer in front, checking each replica on /health/ready', () => {
    const lb = svc('lb');
    expect(lb.image).toMatch(/^haproxy:/);
    expect(lb.ports).toEqual(['5005:5005']);
    expect(lb.depends_on?.parley).toEqual({ condition: 'service_healthy' });
    const cfg = read('deploy/haproxy.cfg');
    expect(lb.volumes).toContain('./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    expect(cfg).toMatch(/^\s*balance roundrobin$/m);
    expect(cfg).toMatch(/^\s*option httpchk GET \/health\/ready$/m);
    expect(cfg).toMatch(/^\s*server-template parley \d+ parley:5005 check$/m);
    expect(parley.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:5005/health/ready');
  });

  it('probes a route Parley serves: /health/ready and /health/live', () => {
    const methods = HealthController.prototype as unknown as Record<'ready' | 'live', object>;
    expect(Reflect.getMetadata(PATH_METADATA, HealthController)).toBe('health');
    expect(Reflect.getMetadata(PATH_METADATA, methods.ready)).toBe('ready');
    expect(Reflect.getMetadata(PATH_METADATA, methods.live)).toBe('live');
  });

  it('starts the replicas only once every dependency reports healthy', () => {
    expect(parley.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      rabbitmq: { condition: 'service_healthy' },
      keycloak: { condition: 'service_healthy' },
      'minio-init': { condition: 'service_completed_successfully' },
    });
    for (const name of ['postgres', 'redis', 'rabbitmq', 'keycloak', 'minio']) {
      expect(svc(name).healthcheck?.test.length).toBeGreaterThan(0);
    }
    expect(svc('postgres').image).toBe('postgres:15');
    expect(svc('minio-init').depends_on?.minio).toEqual({ condition: 'service_healthy' });
  });

  it('hands the replicas only variables Parley reads', () => {
    const known = variablesParleyReads();
    expect(known.has('DATABASE_URL')).toBe(true);
    expect(known.has('AWS_ENDPOINT_URL')).toBe(true);
    const unknown = Object.keys(env).filter(
      (name) => !known.has(name) && !endpointVariables.includes(name),
    );
    expect(unknown).toEqual([]);
    // …and every variable deploy/endpoints.yml needs.
    expect(endpointVariables.length).toBeGreaterThan(0);
    expect(endpointVariables.filter((name) => !(name in env))).toEqual([]);
  });

  it('points the replicas at the compose services', () => {
    const pg = svc('postgres').environment ?? {};
    const db = new URL((env.DATABASE_URL ?? '').replace(/\$\{[^}]*\}/g, 'x'));
    expect(db.hostname).toBe('postgres');
    expect(db.username).toBe(pg.POSTGRES_USER);
    expect(db.pathname).toBe(`/${pg.POSTGRES_DB}`);
    expect(hostOf(env.AWS_ENDPOINT_URL ?? '')).toBe('minio');
    expect(hostOf(env.OIDC_JWKS_URI ?? '')).toBe('keycloak');
    expect(env.PARLEY_ENABLE_API).toBe('true');
    expect(env.LOCK_STORE).toBeUndefined(); // endpoints.yml's lock_store decides
    expect(env.PARLEY_ENDPOINTS).toBe('deploy/endpoints.yml');
  });
});

describe('deploy/endpoints.yml', () => {
  it('names Rasa’s stores for a replicated setup, on the compose hosts', () => {
    expect(entry('tracker_store')).toMatchObject({ type: 'sql', dialect: 'postgresql' });
    expect(entry('tracker_store').url).toBe('postgres');
    expect(entry('lock_store')).toMatchObject({ type: 'concurrent_redis', host: 'redis' });
    expect(entry('event_broker')).toMatchObject({ type: 'pika', url: 'rabbitmq' });
    expect(svc(String(entry('lock_store').host)).image).toMatch(/^redis:/);
    expect(svc(String(entry('event_broker').url)).image).toMatch(/^rabbitmq:/);
  });

  it('is read by Parley without an error: the Redis lock, the PostgreSQL store, RabbitMQ', async () => {
    const file = join(ROOT, 'deploy', 'endpoints.yml');
    const read = await readDialogueEndpoints(file, 'test', 1000);
    expect(read.action).toBeNull();
    expect(read.warnings).toEqual([]);
    const stores = await readStoreEndpoints(file);
    expect(stores.lockStore).not.toBeNull();
    expect(stores.trackerStore).not.toBeNull();
    expect(await readEventBroker(file)).toMatchObject({ type: 'pika' });
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('builds in stages on Node 20 and runs as a non-root user', () => {
    const froms = dockerfile.match(/^FROM node:20\S*/gm) ?? [];
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER (?!root\b)\S+$/m);
  });

  it('installs from the lockfile, trains the example assistant and serves it with the API', () => {
    expect(dockerfile).toMatch(/^RUN npm install\b/m);
    expect(dockerfile).toContain('train --data examples/coffee/data');
    expect(dockerfile).toMatch(/^CMD \["run", "--enable-api"\]$/m);
    expect(dockerfile).toMatch(/PARLEY_MODEL=models$/m);
    // The runtime stage carries deploy/ (PARLEY_ENDPOINTS points into it).
    expect(dockerfile).toMatch(/^COPY --from=build .*\/app\/deploy /m);
  });
});
