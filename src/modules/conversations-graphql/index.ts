// The conversations GraphQL module's public surface: other modules import from here only.
export { ConversationsGraphqlModule } from './conversations-graphql.module';
