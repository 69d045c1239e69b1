// The embedded OpenID Connect provider for development and tests: oidc-provider (ESM-only, so
// it runs in this child process of Parley) on Keycloak's paths under /auth/realms/<realm>,
// issuing Keycloak-shaped access tokens for the confidential clients of a Keycloak realm export.
// Started by embedded-idp.launcher.ts, which passes its settings as JSON in PARLEY_IDP_OPTIONS
// and waits for the { ready, issuer } message on the IPC channel.
import express from 'express';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Provider from 'oidc-provider';

const options = JSON.parse(process.env.PARLEY_IDP_OPTIONS ?? '{}');
const {
  realm,
  realmFile,
  keysFile,
  host = '127.0.0.1',
  port = 0,
  publicHost = 'localhost',
} = options;

/** Keycloak's placeholders in realm files: ${VAR} and ${VAR:default}, from the environment. */
function substitute(text) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g, (_m, name, fallback) => {
    const value = process.env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new Error(`${realmFile}: the environment variable ${name} is not set`);
  });
}

/** Confidential service-account clients of the realm export, with their roles. */
function readRealm() {
  const data = JSON.parse(substitute(readFileSync(realmFile, 'utf8')));
  const users = new Map(
    (data.users ?? [])
      .filter((u) => typeof u.serviceAccountClientId === 'string')
      .map((u) => [u.serviceAccountClientId, u]),
  );
  const clients = [];
  for (const c of data.clients ?? []) {
    if (c.enabled === false || c.publicClient === true || c.serviceAccountsEnabled !== true) {
      continue;
    }
    if (typeof c.clientId !== 'string' || typeof c.secret !== 'string' || c.secret.length === 0) {
      continue;
    }
    const user = users.get(c.clientId) ?? {};
    const audiences = (c.protocolMappers ?? [])
      .filter((m) => m.protocolMapper === 'oidc-audience-mapper')
      .map((m) => m.config?.['included.custom.audience'] ?? m.config?.['included.client.audience'])
      .filter((a) => typeof a === 'string' && a.length > 0);
    clients.push({
      clientId: c.clientId,
      secret: c.secret,
      realmRoles: user.realmRoles ?? [],
      clientRoles: user.clientRoles ?? {},
      audience: audiences[0] ?? 'account',
      // Keycloak's "Web origins": browser pages of these origins may call the token endpoint.
      webOrigins: (c.webOrigins ?? []).filter((o) => typeof o === 'string' && o.length > 0),
    });
  }
  return clients;
}

/** Signing keys (RS256 used for tokens, ES256 published too), kept across restarts. */
function readKeys() {
  if (existsSync(keysFile)) return JSON.parse(readFileSync(keysFile, 'utf8'));
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    format: 'jwk',
  });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    format: 'jwk',
  });
  const keys = {
    keys: [
      { ...rsa, kid: `rs-${randomUUID()}`, alg: 'RS256', use: 'sig' },
      { ...ec, kid: `es-${randomUUID()}`, alg: 'ES256', use: 'sig' },
    ],
  };
  mkdirSync(dirname(keysFile), { recursive: true });
  writeFileSync(keysFile, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

const clients = readRealm();
const byId = new Map(clients.map((c) => [c.clientId, c]));
const jwks = readKeys();

const app = express();
const server = app.listen(port, host);
server.on('listening', () => {
  const actual = server.address().port;
  const issuer = `http://${publicHost}:${actual}/auth/realms/${realm}`;
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    jwks,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: false },
      revocation: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:parley:api',
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, _resource, client) => ({
          scope: 'profile email',
          audience: byId.get(client.clientId)?.audience ?? 'account',
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    clientAuthMethods: ['client_secret_post', 'client_secret_basic'],
    // CORS on the token endpoint, per client, as Keycloak's webOrigins: an exact origin, or "*".
    clientBasedCORS: (_ctx, origin, client) => {
      const origins = byId.get(client.clientId)?.webOrigins ?? [];
      return origin !== 'null' && (origins.includes('*') || origins.includes(origin));
    },
    ttl: { ClientCredentials: 300 },
    routes: {
      authorization: '/protocol/openid-connect/auth',
      token: '/protocol/openid-connect/token',
      jwks: '/protocol/openid-connect/certs',
      userinfo: '/protocol/openid-connect/userinfo',
      end_session: '/protocol/openid-connect/logout',
    },
    extraTokenClaims: (_ctx, token) => {
      const client = byId.get(token.clientId);
      if (!client) return undefined;
      const resourceAccess = {};
      for (const [id, roles] of Object.entries(client.clientRoles)) resourceAccess[id] = { roles };
      return {
        typ: 'Bearer',
        azp: client.clientId,
        preferred_username: `service-account-${client.clientId}`,
        realm_access: { roles: client.realmRoles },
        resource_access: resourceAccess,
      };
    },
  });
  provider.on('server_error', (_ctx, error) => console.error(`oidc-provider: ${error.message}`));
  app.use(`/auth/realms/${realm}`, provider.callback());
  process.send?.({ ready: true, issuer, port: actual, clients: clients.map((c) => c.clientId) });
});
server.on('error', (error) => {
  if (error.code === 'EADDRINUSE' && port !== 0) {
    // The configured port is taken (another Parley?): take a free one; the issuer names it.
    console.error(`port ${port} is in use, listening on a free port instead`);
    server.listen(0, host);
    return;
  }
  process.send?.({ ready: false, error: error.message });
  process.exit(1);
});
// Never outlive Parley.
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
