import { type NestExpressApplication } from '@nestjs/platform-express';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParleyApp } from 'src/bootstrap/create-app';
import { Domain } from 'src/core';
import { ServedModel } from 'src/modules/model';
import { type AppConfig } from 'src/platform/config/app-config';
import { validateEnv } from 'src/platform/config/validate-env';

export const FIXTURES = join(__dirname, '..', 'fixtures');

/** Config for a test server: API on, quiet logs, the test database, plus `env` overrides. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return validateEnv({
    PARLEY_ENABLE_API: 'true',
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.DATABASE_URL,
    DATABASE_POOL_SIZE: '10',
    // Not the default `models/`: after `npm start` (the quick start's first command) the checkout
    // holds a trained moodbot there, and a test server must start without a model unless the
    // test gives it one.
    PARLEY_MODEL: NO_MODEL_DIR,
    ...env,
  });
}

/** A model path that holds no model. */
const NO_MODEL_DIR = join(tmpdir(), 'parley-tests-no-model');

export function testDomain(): Domain {
  return Domain.fromYaml(readFileSync(join(FIXTURES, 'domain.yml'), 'utf8'), 'domain.yml');
}

export interface TestApp {
  app: NestExpressApplication;
  /** `http://127.0.0.1:<port>` of the listening server. */
  url: string;
  registry: ServedModel;
  close(): Promise<void>;
}

/**
 * Starts a real Parley server on a free loopback port, through the same createParleyApp() and
 * configureApp() as `parley run`. With `withDomain` the test domain is loaded, standing in for a
 * trained model.
 */
export async function startTestApp(
  options: { env?: Record<string, string>; withDomain?: boolean } = {},
): Promise<TestApp> {
  const config = testConfig(options.env);
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set: the jest global setup provides it');
  const app = await createParleyApp(config, databaseUrl);
  await app.listen(0, '127.0.0.1');
  const registry = app.get(ServedModel);
  if (options.withDomain !== false) {
    registry.load({
      domain: testDomain(),
      modelId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      modelFile: '20261121-101500-brisk-crab.tar.gz',
      assistantId: 'test_assistant',
    });
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}`, registry, close: () => app.close() };
}

/** A conversation id no other test uses. */
export function uniqueId(prefix = 'conv'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
