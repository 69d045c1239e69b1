import { type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';

/**
 * Refuses operations whose estimated cost exceeds `max` before they run (rawConversations
 * costs its `limit` times its selection), with `QUERY_TOO_COMPLEX` and HTTP 400.
 */
export function complexityLimitPlugin(max: number): ApolloServerPlugin {
  return {
    requestDidStart() {
      return Promise.resolve({
        didResolveOperation({ request, document, schema }) {
          const complexity = getComplexity({
            schema,
            query: document,
            operationName: request.operationName ?? undefined,
            variables: request.variables ?? {},
            estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
          });
          if (complexity > max) {
            throw new GraphQLError(
              `The operation is too complex: ${complexity} (maximum ${max}). Ask for smaller pages.`,
              { extensions: { code: 'QUERY_TOO_COMPLEX', http: { status: 400 } } },
            );
          }
          return Promise.resolve();
        },
      });
    },
  };
}
