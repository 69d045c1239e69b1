import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { documentHoldsNul, documentLimitsRule, variablesHoldNul } from './document-limits';

const schema = buildSchema(`
  type Node { id: ID, child: Node }
  type Query { node(id: ID): Node, other: Int }
`);

function errorsOf(source: string, maxDepth = 3, maxRootFields = 3): string[] {
  return validate(schema, parse(source), [
    ...specifiedRules,
    documentLimitsRule(maxDepth, maxRootFields),
  ]).map((e) => e.message);
}

describe('documentLimitsRule', () => {
  it('counts depth below the root fields, through fragments and inline fragments', () => {
    expect(errorsOf('{ node { child { child { id } } } }')).toEqual([]);
    expect(errorsOf('{ node { child { child { child { id } } } } }')).toEqual([
      'Operation (anonymous) exceeds the maximum depth of 3 (GRAPHQL_MAX_DEPTH).',
    ]);
    expect(
      errorsOf(
        'query Q { node { ...F } } fragment F on Node { child { ... on Node { child { child { id } } } } }',
      ),
    ).toEqual(['Operation "Q" exceeds the maximum depth of 3 (GRAPHQL_MAX_DEPTH).']);
  });

  it('counts every alias and fragment-spread root field, not introspection fields', () => {
    expect(errorsOf('{ a: other b: other c: other __typename }')).toEqual([]);
    expect(
      errorsOf('query Q { a: other ...R } fragment R on Query { b: other c: other d: other }'),
    ).toEqual([
      'Operation "Q" selects 4 root fields (each alias counts); the maximum is 3 (GRAPHQL_MAX_ROOT_FIELDS).',
    ]);
  });

  it('leaves fragment cycles to the standard rule instead of recursing forever', () => {
    const errors = errorsOf(
      '{ node { ...A } } fragment A on Node { id ...B } fragment B on Node { child { ...A } }',
    );
    expect(errors).toContainEqual(expect.stringMatching(/Cannot spread fragment "A"/));
  });

  it('measures a fragment bomb (2^40 expanded selections) once per fragment', () => {
    const fragments = Array.from({ length: 40 }, (_, i) =>
      i === 39
        ? `fragment F39 on Query { other }`
        : `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    );
    const errors = errorsOf(`query Q { ...F0 } ${fragments.join(' ')}`);
    expect(errors).toEqual([
      `Operation "Q" selects ${2 ** 39} root fields (each alias counts); the maximum is 3 (GRAPHQL_MAX_ROOT_FIELDS).`,
    ]);
  });
});

describe('NUL detection', () => {
  it('finds NUL in string literals and in variable values and keys', () => {
    expect(documentHoldsNul(parse('{ node(id: "a\\u0000b") { id } }'))).toBe(true);
    expect(documentHoldsNul(parse('{ node(id: "ab") { id } }'))).toBe(false);
    expect(variablesHoldNul({ input: { list: ['a', 'b\u0000'] } })).toBe(true);
    expect(variablesHoldNul({ ['k\u0000']: 1 })).toBe(true);
    expect(variablesHoldNul({ input: { list: ['a', 1, null, { b: 'c' }] } })).toBe(false);
    expect(variablesHoldNul(undefined)).toBe(false);
  });
});
