import { Module } from '@nestjs/common';
import { OidcAuthMiddleware } from './oidc-auth.middleware';
import { OidcJwtStrategy } from './oidc-jwt.strategy';
import { OidcRoleGuard } from './oidc-role.guard';

/** OpenID Connect bearer tokens (Keycloak or the embedded provider) for the GraphQL API. */
@Module({
  providers: [OidcJwtStrategy, OidcAuthMiddleware, OidcRoleGuard],
  exports: [OidcJwtStrategy, OidcAuthMiddleware, OidcRoleGuard],
})
export class OidcAuthModule {}
