// The auth module's public surface: other modules import from here only.
export { AuthModule } from './auth.module';
export { startEmbeddedIdpIfConfigured } from './oidc/embedded-idp/embedded-idp.bootstrap';
export { OidcAuthMiddleware } from './oidc/oidc-auth.middleware';
export { OidcAuthModule } from './oidc/oidc-auth.module';
export { OidcRoleGuard } from './oidc/oidc-role.guard';
