import {
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  visit,
} from 'graphql';

type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

function fragmentsOf(document: DocumentNode): Fragments {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  return fragments;
}

/**
 * Measures selection sets with fragments followed, each fragment measured once (memoised), so
 * a fragment "bomb" (fragments spreading the next one many times) costs linear time. A
 * fragment already on the path counts 0: a cycle, which NoFragmentCyclesRule reports.
 */
class Measure {
  private readonly depths = new Map<string, number>();
  private readonly roots = new Map<string, number>();
  private readonly onPath = new Set<string>();

  constructor(private readonly fragments: Fragments) {}

  private viaFragment(
    name: string,
    memo: Map<string, number>,
    measure: (set: SelectionSetNode) => number,
  ): number {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const fragment = this.fragments.get(name);
    if (fragment === undefined || this.onPath.has(name)) return 0;
    this.onPath.add(name);
    const value = measure(fragment.selectionSet);
    this.onPath.delete(name);
    memo.set(name, value);
    return value;
  }

  /** Deepest field nesting below a selection set (a leaf field is 1). */
  depth(set: SelectionSetNode): number {
    let deepest = 0;
    for (const selection of set.selections) {
      const depth =
        selection.kind === Kind.FIELD
          ? 1 + (selection.selectionSet ? this.depth(selection.selectionSet) : 0)
          : selection.kind === Kind.INLINE_FRAGMENT
            ? this.depth(selection.selectionSet)
            : this.viaFragment(selection.name.value, this.depths, (s) => this.depth(s));
      deepest = Math.max(deepest, depth);
    }
    return deepest;
  }

  /** Root fields of a selection set, each alias counted, fragments expanded. */
  rootFields(set: SelectionSetNode): number {
    let count = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (!selection.name.value.startsWith('__')) count++;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        count += this.rootFields(selection.selectionSet);
      } else {
        count += this.viaFragment(selection.name.value, this.roots, (s) => this.rootFields(s));
      }
    }
    return count;
  }
}

/**
 * Validation rule: every operation nests fields at most `maxDepth` deep and selects at most
 * `maxRootFields` root fields (each alias is one: a thousand aliases of one cheap field are a
 * thousand database queries). Answers GRAPHQL_VALIDATION_FAILED; cyclic fragments are left to
 * the standard NoFragmentCyclesRule.
 */
export function documentLimitsRule(maxDepth: number, maxRootFields: number) {
  return (context: ValidationContext): ASTVisitor => {
    const measure = new Measure(fragmentsOf(context.getDocument()));
    return {
      OperationDefinition(operation: OperationDefinitionNode) {
        const name = operation.name ? `"${operation.name.value}"` : '(anonymous)';
        // graphql-js validates an operation type the schema lacks only at execution (a 500):
        // refuse it here, as a validation error of the caller's document.
        if (context.getSchema().getRootType(operation.operation) === undefined) {
          context.reportError(
            new GraphQLError(
              `Operation ${name}: this API has no ${operation.operation} operations.`,
              { nodes: [operation] },
            ),
          );
          return false;
        }
        // Root fields are at depth 0, their fields at 1, and so on.
        const depth = measure.depth(operation.selectionSet) - 1;
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(
              `Operation ${name} exceeds the maximum depth of ${maxDepth} (GRAPHQL_MAX_DEPTH).`,
              { nodes: [operation] },
            ),
          );
        }
        const roots = measure.rootFields(operation.selectionSet);
        if (roots > maxRootFields) {
          context.reportError(
            new GraphQLError(
              `Operation ${name} selects ${roots} root fields (each alias counts); the maximum is ${maxRootFields} (GRAPHQL_MAX_ROOT_FIELDS).`,
              { nodes: [operation] },
            ),
          );
        }
        return false; // nothing below the operation needs visiting here
      },
    };
  };
}

/** True when a string holds a NUL character, which PostgreSQL text cannot store. */
function hasNul(value: string): boolean {
  return value.includes('\u0000');
}

/** A NUL character anywhere in the variables (keys or string values), searched iteratively. */
export function variablesHoldNul(variables: unknown): boolean {
  const stack: unknown[] = [variables];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (hasNul(value)) return true;
    } else if (Array.isArray(value)) {
      stack.push(...(value as unknown[]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (hasNul(key)) return true;
        stack.push(inner);
      }
    }
  }
  return false;
}

/** A NUL character in a string literal of the document. */
export function documentHoldsNul(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    StringValue(node) {
      if (hasNul(node.value)) found = true;
    },
  });
  return found;
}
