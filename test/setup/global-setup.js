'use strict';
// Gives the whole test run one fresh, migrated PostgreSQL database:
// - with DATABASE_URL (CI, docker-compose): a new database `parley_test_<…>` on that server;
// - without it: a throwaway embedded PostgreSQL (real binaries) in a temp dir.
// Tests read the resulting URL from process.env.DATABASE_URL.
const { existsSync, mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');
const { URL } = require('node:url');

const dist = join(__dirname, '..', '..', 'dist');

function need(file) {
  const path = join(dist, file);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run "npm run build" first (npm test does it for you).`);
  }
  return require(path);
}

module.exports = async function globalSetup() {
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const { startEmbeddedPostgres } = need('platform/database/embedded-postgres.launcher.js');
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-pg-'));
    let handle;
    try {
      handle = await startEmbeddedPostgres({
        dataDir,
        port: null,
        persistent: false,
        database: 'postgres',
      });
    } catch (e) {
      // The launcher words its failures as one line (cause and fix); a stack adds nothing.
      process.stderr.write(`\n${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    }
    globalThis.__PARLEY_EMBEDDED_PG__ = handle;
    globalThis.__PARLEY_EMBEDDED_PG_DIR__ = dataDir;
    serverUrl = handle.url;
    process.env.PARLEY_TEST_EMBEDDED = '1';
  }
  const dbName = `parley_test_${Date.now().toString(36)}_${process.pid}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${dbName}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  globalThis.__PARLEY_TEST_DB__ = { serverUrl, dbName };
  process.env.PARLEY_TEST_SERVER_URL = serverUrl;
  process.env.DATABASE_URL = url.toString();

  const { DataSource } = require('typeorm');
  const { buildTypeOrmOptions } = need('platform/database/typeorm-options.js');
  const { runMigrationsLocked } = need('platform/database/run-migrations.js');
  const ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL, 2)).initialize();
  try {
    await runMigrationsLocked(ds);
  } finally {
    await ds.destroy();
  }
};
