import { type OidcConfig } from 'src/platform/config/app-config';

/** An OidcConfig for unit tests, with `overrides`. */
export function testConfigOidc(overrides: Partial<OidcConfig> = {}): OidcConfig {
  return {
    issuerUrl: 'http://localhost:8081/auth/realms/parley',
    jwksUri: null,
    audience: null,
    role: 'Manage Conversations',
    roleClients: [],
    embedded: false,
    embeddedPort: 0,
    realm: 'parley',
    realmFile: 'keycloak/parley-realm.json',
    ...overrides,
  };
}
