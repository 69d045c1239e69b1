import { DialogueError } from 'src/core/errors/dialogue-error';
import { Anonymizer, parseAnonymizationConfig } from './anonymizer';
import { ibanValid, luhnValid } from './recognizers';

const config = (rules: unknown[], id = 'r1'): Anonymizer => {
  const parsed = parseAnonymizationConfig('endpoints.yml', { rule_lists: [{ id, rules }] });
  return new Anonymizer(parsed!.ruleLists[0]!);
};

const userEvent = (text: string, entities: unknown[] = []): Record<string, unknown> => ({
  sender_id: 'c1',
  event: 'user',
  timestamp: 1,
  text,
  parse_data: { text, intent: { name: 'inform', confidence: 1 }, entities },
  input_channel: 'rest',
  metadata: { event_id: 'e1', seq: 1 },
});

describe('parseAnonymizationConfig', () => {
  it('absent: null; Rasa Pro keys accepted, substitution defaults to mask', () => {
    expect(parseAnonymizationConfig('f', undefined)).toBeNull();
    expect(
      parseAnonymizationConfig('f', {
        metadata: { language: 'en', model_name: 'en_core_web_lg', model_provider: 'spacy' },
        rule_lists: [
          {
            id: 'a',
            rules: [
              { entity: 'PERSON' },
              { entity: 'IBAN_CODE', substitution: 'text', value: 'X' },
            ],
          },
        ],
      }),
    ).toEqual({
      language: 'en',
      ruleLists: [
        {
          id: 'a',
          rules: [
            { entity: 'PERSON', substitution: 'mask', value: null },
            { entity: 'IBAN_CODE', substitution: 'text', value: 'X' },
          ],
        },
      ],
    });
  });

  it.each([
    [[], 'anonymization.rule_lists: must be a non-empty list'],
    [
      [{ id: 'a', rules: [{ entity: 'PERSON', substitution: 'hash' }] }],
      'rule_lists[0].rules[0].substitution',
    ],
    [[{ id: 'a', rules: [{ entity: 'person' }] }], 'rule_lists[0].rules[0].entity'],
    [[{ id: 'a', rules: [] }], 'rule_lists[0].rules: must be a non-empty'],
    [
      [{ id: 'a', rules: [{ entity: 'PERSON', substitution: 'mask', value: 'x' }] }],
      "rules[0].value: is only for substitution 'text'",
    ],
    [
      [
        { id: 'a', rules: [{ entity: 'PERSON' }] },
        { id: 'a', rules: [{ entity: 'PERSON' }] },
      ],
      "rule_lists[1].id: 'a' is used twice",
    ],
  ])('a malformed entry names the key (%#)', (lists, message) => {
    const run = (): unknown => parseAnonymizationConfig('endpoints.yml', { rule_lists: lists });
    expect(run).toThrow(DialogueError);
    expect(run).toThrow(message);
  });
});

describe('Anonymizer', () => {
  it('mask: user text, parse_data and entity values, offsets kept; other fields untouched', () => {
    const a = config([{ entity: 'PERSON', substitution: 'mask' }, { entity: 'EMAIL_ADDRESS' }]);
    const input = userEvent('I am Anna Berg, anna@example.org', [
      { entity: 'person', start: 5, end: 14, value: 'Anna Berg', extractor: 'CRFEntityExtractor' },
    ]);
    const frozen = JSON.stringify(input);
    const [out] = a.anonymizeEvents([input]);
    expect(JSON.stringify(input)).toBe(frozen); // the input is not changed
    expect(out).toMatchObject({
      sender_id: 'c1',
      text: 'I am *********, ****************',
      input_channel: 'rest',
      metadata: { event_id: 'e1', seq: 1 },
      parse_data: {
        text: 'I am *********, ****************',
        intent: { name: 'inform', confidence: 1 },
        entities: [{ entity: 'person', start: 5, end: 14, value: '*********' }],
      },
    });
  });

  it('text: the value, or <ENTITY> without one; offsets move with the new length', () => {
    const a = config([
      { entity: 'PERSON', substitution: 'text', value: 'John Doe' },
      { entity: 'PHONE_NUMBER', substitution: 'text' },
    ]);
    const [out] = a.anonymizeEvents([
      userEvent('call +49 170 1234567, Bo speaking, ok', [
        { entity: 'PERSON', start: 22, end: 24, value: 'Bo' },
      ]),
    ]);
    expect(out?.text).toBe('call <PHONE_NUMBER>, John Doe speaking, ok');
    const entity = (out?.parse_data as { entities: Array<Record<string, unknown>> }).entities[0];
    expect(entity).toMatchObject({ value: 'John Doe', start: 21, end: 29 });
    expect((out?.text as string).slice(21, 29)).toBe('John Doe');
  });

  it('faker: deterministic, well-formed fakes; unknown types fall back to mask', () => {
    const a = config([
      { entity: 'CREDIT_CARD', substitution: 'faker' },
      { entity: 'IBAN_CODE', substitution: 'faker' },
      { entity: 'EMAIL_ADDRESS', substitution: 'faker' },
      { entity: 'NRP', substitution: 'faker' },
    ]);
    const text = 'pay 4111 1111 1111 1111 from DE89 3704 0044 0532 0130 00, x@y.org, Swiss';
    const run = (): Record<string, unknown> =>
      a.anonymizeEvents([userEvent(text, [{ entity: 'NRP', value: 'Swiss' }])])[0]!;
    const first = run();
    expect(run()).toEqual(first);
    const out = first.text as string;
    const card = /pay (\d{16}) from/.exec(out)?.[1] ?? '';
    expect(card).not.toBe('4111111111111111');
    expect(luhnValid(card)).toBe(true);
    const iban = /from (\S+),/.exec(out)?.[1] ?? '';
    expect(ibanValid(iban)).toBe(true);
    expect(out).toMatch(/, [a-z]+\.[a-z]+\d\d@example\.com, \*\*\*\*\*$/);
    // another rule list id gives other fakes
    const other = config([{ entity: 'CREDIT_CARD', substitution: 'faker' }], 'r2');
    expect(other.anonymizeEvents([userEvent('4111 1111 1111 1111')])[0]?.text).not.toBe(card);
  });

  it('a value found once is replaced in the bot echo and in the slot filled from it', () => {
    const a = config([
      { entity: 'PERSON', substitution: 'text', value: '<NAME>' },
      { entity: 'EMAIL_ADDRESS' },
    ]);
    const out = a.anonymizeEvents([
      userEvent('my name is Anna', [{ entity: 'person', start: 11, end: 15, value: 'Anna' }]),
      { sender_id: 'c1', event: 'slot', name: 'name', value: 'Anna' },
      { sender_id: 'c1', event: 'slot', name: 'contact', value: { mail: 'a@b.io', n: 3 } },
      { sender_id: 'c1', event: 'bot', text: 'Hi Anna! Annabel is not you.', data: {} },
      { sender_id: 'c1', event: 'entities', entities: [{ entity: 'PERSON', value: 'Bea' }] },
      { sender_id: 'c1', event: 'action', name: 'utter_greet' },
    ]);
    expect(out.map((e) => e.text ?? e.value ?? e.entities ?? e.name)).toEqual([
      'my name is <NAME>',
      '<NAME>',
      { mail: '******', n: 3 },
      'Hi <NAME>! Annabel is not you.',
      [{ entity: 'PERSON', value: '<NAME>' }],
      'utter_greet',
    ]);
  });

  it('types without a rule stay, as do entities of other types', () => {
    const a = config([{ entity: 'PHONE_NUMBER' }]);
    const [out] = a.anonymizeEvents([
      userEvent('Anna, a@b.io, 0170 1234567', [
        { entity: 'person', start: 0, end: 4, value: 'Anna' },
      ]),
    ]);
    expect(out?.text).toBe('Anna, a@b.io, ************');
    expect((out?.parse_data as { entities: unknown[] }).entities).toEqual([
      { entity: 'person', start: 0, end: 4, value: 'Anna' },
    ]);
  });
});
