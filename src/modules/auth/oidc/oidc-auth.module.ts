import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { OidcAuthMiddleware } from './oidc-auth.middleware';
import { OidcJwtStrategy } from './oidc-jwt.strategy';
import { OidcRoleGuard } from './oidc-role.guard';

/** OpenID Connect bearer tokens (Keycloak or the embedded provider) for the GraphQL API. */
@Module({
  imports: [PassportModule],
  providers: [OidcJwtStrategy, OidcAuthMiddleware, OidcRoleGuard],
  exports: [OidcAuthMiddleware, OidcRoleGuard],
})
export class OidcAuthModule {}
