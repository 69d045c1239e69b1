import fc from 'fast-check';

/** A GraphQL value literal: right and wrong types, variables, lists, objects, odd strings. */
const literal: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer().map(String),
    fc.constantFrom('99999999999999999999', '-2147483649', '2147483648', '1e400', '0.5', '-0'),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d)),
    fc.string({ maxLength: 30 }).map((s) => JSON.stringify(s)),
    fc.constantFrom(
      '"2026-03-01T10:00:00Z"',
      '"2026-02-30T25:61:61Z"',
      '"not a date"',
      '""',
      '"\\u0000"',
      '"\\ud800"',
      '"""block\nstring"""',
      'true',
      'null',
      'ENUM_VALUE',
      '$input',
      '$x',
      '$undefinedVar',
    ),
    fc.array(tie('value'), { maxLength: 4 }).map((vs) => `[${vs.join(', ')}]`),
    fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'assistantId',
            'fromTime',
            'toTime',
            'limit',
            'offset',
            'conversationId',
            'conversationIds',
            'tagId',
            'name',
            'unknown',
          ),
          tie('value'),
        ),
        { maxLength: 5 },
      )
      .map((kvs) => `{${kvs.map(([k, v]) => `${k}: ${v}`).join(', ')}}`),
  ),
})).value;

/** An input object for the operations' `input` argument, with random fields. */
const inputLiteral = fc
  .record(
    {
      assistantId: literal,
      fromTime: literal,
      toTime: literal,
      limit: literal,
      offset: literal,
      conversationId: literal,
      conversationIds: literal,
      tagId: literal,
      name: literal,
    },
    { requiredKeys: [] },
  )
  .map(
    (o) =>
      `{${Object.entries(o)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}}`,
  );

const TAG_FIELDS = ['id', 'name', 'assistantId', '__typename', 'nope'];
const CONVERSATION_FIELDS = ['id', 'conversationEvents', '__typename', 'missing'];

/** A selection set on ConversationTag. */
const tagSelection = fc
  .subarray(TAG_FIELDS, { minLength: 0 })
  .chain((fields) =>
    fc.tuple(
      fc.constant(fields),
      fc.boolean(),
      fc.boolean(),
      fc.constantFrom('', 'alias1: ', 'id: ', '__typename: '),
    ),
  )
  .map(
    ([fields, spread, inline, alias]) =>
      `{ ${fields.map((f, i) => (i === 0 ? alias + f : f)).join(' ')}${spread ? ' ...TagBits' : ''}${inline ? ' ... on ConversationTag { id }' : ''} }`,
  );

const conversationSelection = fc
  .tuple(fc.subarray(CONVERSATION_FIELDS), fc.option(tagSelection, { nil: undefined }))
  .map(([fields, tags]) => `{ ${fields.join(' ')}${tags !== undefined ? ` tags ${tags}` : ''} }`);

const rawSelection = fc
  .tuple(fc.boolean(), fc.option(conversationSelection, { nil: undefined }), fc.boolean())
  .map(
    ([count, conversations, typename]) =>
      `{ ${count ? 'count ' : ''}${conversations !== undefined ? `conversations ${conversations}` : ''}${typename ? ' __typename' : ''} }`,
  );

/** The query and mutation fields of the schema: the operations a client can run. */
export const GRAPHQL_OPERATIONS = [
  'rawConversations',
  'conversationTags',
  'addConversationTagToConversation',
  'removeConversationTagFromConversation',
  'deleteConversations',
  'createConversationTag',
  'deleteConversationTag',
] as const;
export type GraphqlOperation = (typeof GRAPHQL_OPERATIONS)[number];

const MUTATIONS: ReadonlySet<GraphqlOperation> = new Set([
  'addConversationTagToConversation',
  'removeConversationTagFromConversation',
  'deleteConversations',
  'createConversationTag',
  'deleteConversationTag',
]);

/** An input of the right shape and field types (random values): it gets to the resolver. */
const plausibleInput = fc
  .record(
    {
      assistantId: fc.constantFrom('"moodbot"', '"fuzz"', '""'),
      fromTime: fc.constantFrom('"2026-01-01T00:00:00Z"', '"2027-01-01T00:00:00Z"'),
      toTime: fc.constantFrom('"2026-01-01T00:00:00Z"', '"2027-01-01T00:00:00Z"'),
      limit: fc.integer({ min: -1, max: 200 }).map(String),
      offset: fc.integer({ min: -1, max: 50 }).map(String),
      conversationId: fc.stringMatching(/^[a-z0-9-]{1,12}$/).map((v) => JSON.stringify(v)),
      conversationIds: fc
        .array(fc.stringMatching(/^fuzz-[a-z0-9]{1,8}$/), { maxLength: 3 })
        .map((v) => JSON.stringify(v)),
      tagId: fc.oneof(fc.uuid(), fc.stringMatching(/^[0-9]{1,4}$/)).map((v) => JSON.stringify(v)),
      name: fc.string({ maxLength: 20 }).map((v) => JSON.stringify(v)),
    },
    { requiredKeys: [] },
  )
  .map(
    (o) =>
      `{${Object.entries(o)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}}`,
  );

const anyInput = fc.oneof(inputLiteral, plausibleInput, literal);

/** The field `op` with random arguments and selections. */
function fieldFor(op: GraphqlOperation): fc.Arbitrary<string> {
  switch (op) {
    case 'rawConversations':
      return fc
        .tuple(anyInput, rawSelection)
        .map(([input, sel]) => `rawConversations(input: ${input}) ${sel}`);
    case 'conversationTags':
      return fc
        .tuple(fc.oneof(literal, fc.constantFrom('"moodbot"', '"fuzz"')), tagSelection)
        .map(([id, sel]) => `conversationTags(assistantId: ${id}) ${sel}`);
    case 'createConversationTag':
      return fc
        .tuple(anyInput, tagSelection)
        .map(([input, sel]) => `createConversationTag(input: ${input}) ${sel}`);
    case 'addConversationTagToConversation':
    case 'removeConversationTagFromConversation':
    case 'deleteConversations':
    case 'deleteConversationTag':
      return fc
        .tuple(anyInput, fc.boolean())
        .map(([input, sel]) => `${op}(input: ${input})${sel ? ' { id }' : ''}`);
  }
}

/** One top-level field with random arguments and selections. */
const topField = fc.oneof(
  ...GRAPHQL_OPERATIONS.map(fieldFor),
  fc.constantFrom(
    '__typename',
    '__schema { queryType { name } }',
    '__type(name: "RawConversation") { fields { name type { name ofType { name } } } }',
    'nosuchfield',
    'rawConversations',
  ),
);

const operation = fc
  .tuple(
    fc.constantFrom('query', 'mutation', 'subscription', ''),
    fc.constantFrom('', 'Op', 'Other'),
    fc.constantFrom(
      '',
      '($input: RawConversationsInput!)',
      '($input: CreateConversationTagInput!, $x: Int)',
      '($input: DeleteConversationsInput!)',
      '($x: String = "d")',
      '($input: NoSuchType)',
    ),
    fc.array(fc.tuple(fc.constantFrom('', 'a: ', 'b: ', 'a: '), topField), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([kind, name, vars, fields]) => {
    const body = `{ ${fields.map(([alias, f]) => alias + f).join(' ')} }`;
    return kind === '' && name === '' && vars === ''
      ? body
      : `${kind || 'query'} ${name}${vars} ${body}`;
  });

const FRAGMENTS = [
  '',
  'fragment TagBits on ConversationTag { id name }',
  'fragment TagBits on ConversationTag { ...TagBits }',
  'fragment TagBits on RawConversation { id }',
  'fragment TagBits on ConversationTag { id } fragment TagBits on ConversationTag { name }',
];

/** Deeply nested selections and introspection (depth and complexity limits). */
const deepDocument = fc
  .record({
    depth: fc.integer({ min: 5, max: 400 }),
    kind: fc.constantFrom('garbage', 'introspection', 'tags', 'lists'),
  })
  .map(({ depth, kind }) => {
    if (kind === 'garbage') return `{ ${'a { '.repeat(depth)}b${' }'.repeat(depth)} }`;
    if (kind === 'introspection') {
      return `{ __schema { types { ${'fields { type { '.repeat(depth)}name${' } }'.repeat(depth)} } } }`;
    }
    if (kind === 'lists') {
      return `{ conversationTags(assistantId: ${'['.repeat(depth)}"a"${']'.repeat(depth)}) { id } }`;
    }
    return `{ ${Array.from({ length: Math.min(depth, 200) }, (_, i) => `t${i}: conversationTags(assistantId: "a") { id }`).join(' ')} }`;
  });

/** A document: a generated operation (with fragments), a mutated one, a deep one, or garbage. */
export const graphqlDocument: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(operation, fc.constantFrom(...FRAGMENTS)).map(([o, f]) => `${o}\n${f}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(operation, fc.nat(), fc.string({ maxLength: 3 }))
      .map(
        ([o, at, insert]) =>
          o.slice(0, at % (o.length + 1)) + insert + o.slice(at % (o.length + 1)),
      ),
  },
  { weight: 2, arbitrary: deepDocument },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      '{',
      '}}}}',
      'query { rawConversations(input: {assistantId: "x"}) { count } } query { __typename }',
      'query A { __typename } query A { __typename }',
      '# only a comment',
      '{ __typename @skip(if: true) @include(if: $x) @nope }',
      'subscription { __typename }',
    ),
  },
);

/** Random `variables`: the right names with random values, wrong types, or no object at all. */
export const graphqlVariables: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      input: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.record(
          {
            assistantId: fc.jsonValue({ maxDepth: 2 }),
            fromTime: fc.jsonValue({ maxDepth: 1 }),
            toTime: fc.jsonValue({ maxDepth: 1 }),
            limit: fc.oneof(fc.integer(), fc.double(), fc.jsonValue({ maxDepth: 1 })),
            offset: fc.oneof(fc.integer(), fc.jsonValue({ maxDepth: 1 })),
            conversationIds: fc.jsonValue({ maxDepth: 2 }),
            name: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: [] },
        ),
      ),
      x: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** How the document travels: auth, operationName, a batch, a body of the wrong shape. */
export interface GraphqlCase {
  readonly query: string;
  readonly variables: unknown;
  readonly operationName: string | null;
  readonly auth: 'token' | 'none' | 'garbage';
  readonly envelope: 'object' | 'batch' | 'query-not-string' | 'no-query' | 'text-plain' | 'get';
}

export const graphqlCase: fc.Arbitrary<GraphqlCase> = fc.record({
  query: graphqlDocument,
  variables: graphqlVariables,
  operationName: fc.constantFrom(null, 'Op', 'Other', ''),
  auth: fc.constantFrom<GraphqlCase['auth']>('token', 'token', 'token', 'none', 'garbage'),
  envelope: fc.oneof(
    { weight: 10, arbitrary: fc.constant<GraphqlCase['envelope']>('object') },
    {
      weight: 1,
      arbitrary: fc.constantFrom<GraphqlCase['envelope']>(
        'batch',
        'query-not-string',
        'no-query',
        'text-plain',
        'get',
      ),
    },
  ),
});

/**
 * A case for the operation `op`: a document whose first field is `op` (in its own operation
 * type mostly, sometimes the wrong one), with random arguments, selections, fragments, other
 * fields, variables and envelopes; some documents mutated by a stray insertion or nested deep.
 */
export function graphqlCaseFor(op: GraphqlOperation): fc.Arbitrary<GraphqlCase> {
  const own = MUTATIONS.has(op) ? 'mutation' : 'query';
  const document = fc
    .tuple(
      fc.constantFrom(
        own,
        own,
        own,
        own === 'query' ? '' : own,
        'query',
        'mutation',
        'subscription',
      ),
      fc.constantFrom('', 'Op', 'Other'),
      fc.constantFrom(
        '',
        '($input: RawConversationsInput!)',
        '($input: CreateConversationTagInput!, $x: Int)',
        '($input: DeleteConversationsInput!)',
        '($x: String = "d")',
      ),
      fieldFor(op),
      fc.array(fc.tuple(fc.constantFrom('', 'a: ', 'b: '), topField), { maxLength: 2 }),
      fc.constantFrom(...FRAGMENTS),
    )
    .map(([kind, name, vars, first, others, fragment]) => {
      const body = `{ ${first} ${others.map(([alias, f]) => alias + f).join(' ')} }`;
      const head = kind === '' ? '' : `${kind} ${name}${vars} `;
      return `${head}${body}\n${fragment}`;
    });
  const deep = fc
    .record({ depth: fc.integer({ min: 5, max: 400 }), open: fc.constantFrom('[', '{a: ') })
    .map(({ depth, open }) => {
      const close = open === '[' ? ']' : '}';
      const value = `${open.repeat(depth)}"x"${close.repeat(depth)}`;
      const args = op === 'conversationTags' ? `assistantId: ${value}` : `input: ${value}`;
      return `${own} { ${op}(${args}) { __typename } }`;
    });
  return fc.record({
    query: fc.oneof(
      { weight: 12, arbitrary: document },
      {
        weight: 2,
        arbitrary: fc
          .tuple(document, fc.nat(), fc.string({ maxLength: 3 }))
          .map(
            ([o, at, insert]) =>
              o.slice(0, at % (o.length + 1)) + insert + o.slice(at % (o.length + 1)),
          ),
      },
      { weight: 1, arbitrary: deep },
    ),
    variables: graphqlVariables,
    operationName: fc.constantFrom(null, null, null, 'Op', 'Other', ''),
    auth: fc.constantFrom<GraphqlCase['auth']>('token', 'token', 'token', 'none', 'garbage'),
    envelope: fc.oneof(
      { weight: 20, arbitrary: fc.constant<GraphqlCase['envelope']>('object') },
      {
        weight: 1,
        arbitrary: fc.constantFrom<GraphqlCase['envelope']>(
          'batch',
          'query-not-string',
          'no-query',
          'text-plain',
          'get',
        ),
      },
    ),
  });
}
