import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import depthLimit from 'graphql-depth-limit';
import { OidcAuthMiddleware } from 'src/modules/auth/oidc/oidc-auth.middleware';
import { OidcAuthModule } from 'src/modules/auth/oidc/oidc-auth.module';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { complexityLimitPlugin } from './complexity.plugin';
import { ConversationsResolver } from './conversations.resolver';
import { ConversationsService } from './conversations.service';
import { formatGraphqlError } from './graphql-error.formatter';
import { GRAPHQL_PATH, GraphiqlMiddleware } from './ide/graphiql.middleware';

/** Apollo options of the conversation-management endpoint (shared with the schema printer). */
export function apolloOptions(config: AppConfig): ApolloDriverConfig {
  return {
    path: GRAPHQL_PATH,
    autoSchemaFile: true,
    sortSchema: true,
    // Our own offline GraphiQL page (ide/) instead of the CDN-loaded landing pages.
    playground: false,
    graphiql: false,
    introspection: config.graphql.introspection,
    csrfPrevention: true,
    persistedQueries: false,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    validationRules: [depthLimit(config.graphql.maxDepth)],
    plugins: [complexityLimitPlugin(config.graphql.maxComplexity)],
    formatError: formatGraphqlError,
    context: ({ req }: { req: unknown }) => ({ req }),
  };
}

/**
 * `POST /api/graphql`: read raw conversations, tag them and delete them, authenticated with
 * OpenID Connect bearer tokens (OidcAuthMiddleware runs before Apollo).
 */
@Module({
  imports: [
    OidcAuthModule,
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => apolloOptions(config),
    }),
  ],
  providers: [ConversationsService, ConversationsResolver, GraphiqlMiddleware],
})
export class ConversationsGraphqlModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(GraphiqlMiddleware, OidcAuthMiddleware)
      .forRoutes(
        { path: 'api/graphql', method: RequestMethod.ALL },
        { path: 'api/graphql/*path', method: RequestMethod.ALL },
      );
  }
}
