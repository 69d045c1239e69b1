import { Module } from '@nestjs/common';
import { OidcAuthMiddleware } from './oidc-auth.middleware';
import { OidcRoleGuard } from './oidc-role.guard';
import { OidcTokenVerifier } from './oidc-token-verifier';

/** OpenID Connect bearer tokens (Keycloak or the embedded provider) for the GraphQL API. */
@Module({
  providers: [OidcTokenVerifier, OidcAuthMiddleware, OidcRoleGuard],
  exports: [OidcTokenVerifier, OidcAuthMiddleware, OidcRoleGuard],
})
export class OidcAuthModule {}
