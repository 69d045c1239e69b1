import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import { GraphQLError } from 'graphql';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { type OidcRequest } from './oidc-auth.middleware';

/**
 * Every GraphQL operation needs the configured role (`Manage Conversations`) as a realm role or
 * a client role. The token itself was verified by OidcAuthMiddleware; without the role the
 * operation fails in-band with `FORBIDDEN`.
 */
@Injectable()
export class OidcRoleGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const { req } = GqlExecutionContext.create(context).getContext<{ req?: OidcRequest }>();
    const principal = req?.user;
    if (!principal) {
      throw new GraphQLError('Not authenticated.', { extensions: { code: 'UNAUTHENTICATED' } });
    }
    if (!principal.roles.has(this.config.oidc.role)) {
      throw new GraphQLError(`The client lacks the role "${this.config.oidc.role}".`, {
        extensions: { code: 'FORBIDDEN' },
      });
    }
    return true;
  }
}
