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
 * Deepest field nesting of a selection set, following fragments. A fragment already on the
 * path is not entered again, so a fragment cycle (which NoFragmentCyclesRule reports) cannot
 * recurse forever.
 */
function depthOf(
  set: SelectionSetNode,
  fragments: Fragments,
  onPath: Set<string>,
  limit: number,
): number {
  let deepest = 0;
  for (const selection of set.selections) {
    let depth = 0;
    if (selection.kind === Kind.FIELD) {
      depth = selection.selectionSet
        ? 1 + depthOf(selection.selectionSet, fragments, onPath, limit)
        : 1;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      depth = depthOf(selection.selectionSet, fragments, onPath, limit);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (fragment === undefined || onPath.has(name)) continue;
      onPath.add(name);
      depth = depthOf(fragment.selectionSet, fragments, onPath, limit);
      onPath.delete(name);
    }
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest; // deep enough to refuse: stop looking
  }
  return deepest;
}

/** Root fields an operation selects, each alias counted, fragments at the root expanded. */
function rootFieldsOf(set: SelectionSetNode, fragments: Fragments, onPath: Set<string>): number {
  let count = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) count++;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      count += rootFieldsOf(selection.selectionSet, fragments, onPath);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (fragment === undefined || onPath.has(name)) continue;
      onPath.add(name);
      count += rootFieldsOf(fragment.selectionSet, fragments, onPath);
      onPath.delete(name);
    }
  }
  return count;
}

/**
 * Validation rule: every operation nests fields at most `maxDepth` deep and selects at most
 * `maxRootFields` root fields (each alias is one: a thousand aliases of one cheap field are a
 * thousand database queries). Answers GRAPHQL_VALIDATION_FAILED; cyclic fragments are left to
 * the standard NoFragmentCyclesRule.
 */
export function documentLimitsRule(maxDepth: number, maxRootFields: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = fragmentsOf(context.getDocument());
    return {
      OperationDefinition(operation: OperationDefinitionNode) {
        const name = operation.name ? `"${operation.name.value}"` : '(anonymous)';
        // Root fields are at depth 0, their fields at 1, and so on.
        const depth = depthOf(operation.selectionSet, fragments, new Set(), maxDepth + 1) - 1;
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(
              `Operation ${name} exceeds the maximum depth of ${maxDepth} (GRAPHQL_MAX_DEPTH).`,
              { nodes: [operation] },
            ),
          );
        }
        const roots = rootFieldsOf(operation.selectionSet, fragments, new Set());
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
