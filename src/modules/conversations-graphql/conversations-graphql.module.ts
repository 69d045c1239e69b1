import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { OidcAuthMiddleware, OidcAuthModule } from 'src/modules/auth';
import { TrackerModule } from 'src/modules/tracker';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { AnswerBudget } from './answer-budget';
import { complexityLimitPlugin } from './complexity.plugin';
import { ConversationsResolver } from './conversations.resolver';
import { ConversationsService } from './conversations.service';
import { documentLimitsRule } from './document-limits';
import { GraphqlDocumentSizeMiddleware } from './graphql-document-size.middleware';
import { formatGraphqlError } from './graphql-error.formatter';
import { GRAPHQL_PATH, GraphiqlMiddleware } from './ide/graphiql.middleware';

/** Selections of one operation with every fragment spread expanded. */
const MAX_RECURSIVE_SELECTIONS = 10_000;

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
    // Without introspection, "Did you mean …?" suggestions would still spell out the schema.
    hideSchemaDetailsFromClientErrors: !config.graphql.introspection,
    csrfPrevention: true,
    persistedQueries: false,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    validationRules: [documentLimitsRule(config.graphql.maxDepth, config.graphql.maxRootFields)],
    // Fragment spreads multiply selections: bound them before anything walks the document.
    maxRecursiveSelections: MAX_RECURSIVE_SELECTIONS,
    plugins: [complexityLimitPlugin(config.graphql.maxComplexity)],
    formatError: formatGraphqlError,
    context: ({ req }: { req: unknown }) => ({
      req,
      budget: new AnswerBudget(config.graphql.maxEvents, config.graphql.maxAnswerBytes),
    }),
  };
}

/**
 * `POST /api/graphql`: read raw conversations, tag them and delete them, authenticated with
 * OpenID Connect bearer tokens (OidcAuthMiddleware runs before Apollo).
 */
@Module({
  imports: [
    TrackerModule,
    OidcAuthModule,
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => apolloOptions(config),
    }),
  ],
  providers: [
    ConversationsService,
    ConversationsResolver,
    GraphiqlMiddleware,
    GraphqlDocumentSizeMiddleware,
  ],
})
export class ConversationsGraphqlModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(GraphiqlMiddleware, OidcAuthMiddleware, GraphqlDocumentSizeMiddleware)
      .forRoutes(
        { path: 'api/graphql', method: RequestMethod.ALL },
        { path: 'api/graphql/*path', method: RequestMethod.ALL },
      );
  }
}
