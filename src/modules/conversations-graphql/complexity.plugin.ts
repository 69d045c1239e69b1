import { type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import {
  type ComplexityEstimator,
  fieldExtensionsEstimator,
  getComplexity,
  simpleEstimator,
} from 'graphql-query-complexity';
import { documentHoldsNul, variablesHoldNul } from './document-limits';

/** What each root field costs on top of its selection: every one is a database round trip. */
export const ROOT_FIELD_COST = 10;

const byField = fieldExtensionsEstimator();
const bySelection = simpleEstimator({ defaultComplexity: 1 });

/** A root field (Query or Mutation) costs ROOT_FIELD_COST more, per alias. */
const rootFieldEstimator: ComplexityEstimator = (options) => {
  const { name } = options.type;
  if (name !== 'Query' && name !== 'Mutation') return undefined;
  return ROOT_FIELD_COST + (byField(options) ?? bySelection(options) ?? 1);
};

function badInput(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
  });
}

/**
 * Refuses, before anything runs:
 * - operations whose estimated cost exceeds `max` (rawConversations costs its `limit` times
 *   its selection; each root field and alias costs ROOT_FIELD_COST more), with
 *   `QUERY_TOO_COMPLEX` and HTTP 400;
 * - NUL characters in string arguments (literals or variables), with `BAD_USER_INPUT`:
 *   PostgreSQL text cannot hold them.
 */
export function complexityLimitPlugin(max: number): ApolloServerPlugin {
  return {
    requestDidStart() {
      return Promise.resolve({
        didResolveOperation({ request, document, schema, operation }) {
          if (variablesHoldNul(request.variables) || documentHoldsNul(document)) {
            throw badInput('String arguments must not contain NUL characters (\\u0000).');
          }
          // No operation of that operationName: Apollo answers OPERATION_RESOLUTION_FAILURE next
          // (the cost estimator would fail on the anonymous operation it cannot pick).
          if (operation === undefined) return Promise.resolve();
          const complexity = getComplexity({
            schema,
            query: document,
            operationName: operation.name?.value,
            variables: request.variables ?? {},
            estimators: [rootFieldEstimator, byField, bySelection],
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
