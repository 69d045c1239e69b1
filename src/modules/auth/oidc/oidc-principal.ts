import { type OidcConfig } from 'src/platform/config/app-config';

/** The verified caller of the GraphQL API: a confidential client holding a bearer token. */
export interface OidcPrincipal {
  /** `azp` (Keycloak) or `client_id`: the calling client. */
  readonly clientId: string | null;
  readonly subject: string | null;
  /** Realm roles plus the client roles that count (see OidcConfig.roleClients). */
  readonly roles: ReadonlySet<string>;
}

interface KeycloakClaims {
  sub?: unknown;
  azp?: unknown;
  client_id?: unknown;
  typ?: unknown;
  realm_access?: { roles?: unknown };
  resource_access?: Record<string, { roles?: unknown } | undefined>;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Reads Keycloak's claims into a principal: realm roles (`realm_access.roles`) and client roles
 * (`resource_access.<client>.roles`, of the configured clients or, with none configured, of
 * every client). Null when the token is not an access token (Keycloak's `typ` other than
 * `Bearer`, e.g. an ID or refresh token).
 */
export function principalOf(payload: unknown, config: OidcConfig): OidcPrincipal | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const claims = payload as KeycloakClaims;
  if (claims.typ !== undefined && claims.typ !== 'Bearer') return null;
  const roles = new Set(strings(claims.realm_access?.roles));
  const resources = claims.resource_access ?? {};
  const clients = config.roleClients.length > 0 ? config.roleClients : Object.keys(resources);
  for (const client of clients) {
    for (const role of strings(resources[client]?.roles)) roles.add(role);
  }
  const clientId =
    typeof claims.azp === 'string'
      ? claims.azp
      : typeof claims.client_id === 'string'
        ? claims.client_id
        : null;
  return { clientId, subject: typeof claims.sub === 'string' ? claims.sub : null, roles };
}
