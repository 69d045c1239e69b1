'use strict';
const { rmSync } = require('node:fs');
const { Client } = require('pg');

module.exports = async function globalTeardown() {
  const db = globalThis.__PARLEY_TEST_DB__;
  if (db && process.env.PARLEY_KEEP_TEST_DB !== '1') {
    const admin = new Client({ connectionString: db.serverUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${db.dbName} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  const embedded = globalThis.__PARLEY_EMBEDDED_PG__;
  if (embedded) await embedded.stop();
  // The throwaway cluster's folder (its password file; the cluster itself is gone with stop).
  const dir = globalThis.__PARLEY_EMBEDDED_PG_DIR__;
  if (dir) rmSync(dir, { recursive: true, force: true });
};
