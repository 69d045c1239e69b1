import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type AppConfig } from 'src/platform/config/app-config';
import { type EmbeddedIdpHandle, startEmbeddedIdp } from './embedded-idp.launcher';

interface BootLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object): void;
}

/**
 * For `parley run`: with no external issuer (OIDC_ISSUER_URL) and OIDC_EMBEDDED on, starts the
 * embedded provider and returns the config with its issuer; otherwise the config unchanged.
 */
export async function startEmbeddedIdpIfConfigured(
  config: AppConfig,
  log: BootLog,
): Promise<{ config: AppConfig; idp: EmbeddedIdpHandle | null }> {
  const { oidc } = config;
  if (oidc.issuerUrl !== null || !oidc.embedded) return { config, idp: null };
  if (!existsSync(oidc.realmFile)) {
    log.warn(
      { realmFile: oidc.realmFile },
      'realm file not found: no embedded identity provider, /api/graphql answers 401',
    );
    return { config, idp: null };
  }
  let idp: EmbeddedIdpHandle;
  try {
    idp = await startEmbeddedIdp({
      realm: oidc.realm,
      realmFile: oidc.realmFile,
      keysFile: join(config.database.dataDir, 'oidc-signing-keys.json'),
      port: oidc.embeddedPort,
      onLog: (line) => log.debug({ idp: line }),
    });
  } catch (e) {
    // The REST API does not depend on it: serve on, and say why /api/graphql answers 401.
    log.warn(
      { realmFile: oidc.realmFile, error: e instanceof Error ? e.message : String(e) },
      'embedded identity provider did not start; /api/graphql answers 401',
    );
    return { config, idp: null };
  }
  log.info(
    { issuer: idp.issuer, clients: idp.clients },
    `embedded identity provider: tokens at ${idp.issuer}/protocol/openid-connect/token`,
  );
  return { config: { ...config, oidc: { ...oidc, issuerUrl: idp.issuer } }, idp };
}
