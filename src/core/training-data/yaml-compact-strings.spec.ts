import { serialize } from 'node:v8';
import { Domain } from 'src/core/domain/domain';
import { compactString, parseYamlSource } from 'src/core/training-data/yaml-source';

/**
 * V8's serializer writes a string with the representation it has: tag `"` (0x22) for a
 * one-byte string, `c` (0x63) for a two-byte one. Node's public view of it.
 */
function representation(value: string): 'one-byte' | 'two-byte' {
  const tag = serialize(value)[2];
  if (tag === 0x22) return 'one-byte';
  if (tag === 0x63) return 'two-byte';
  throw new Error(`unexpected serializer tag ${String(tag)}`);
}

// A domain as users write them: one response with a typographic apostrophe and an emoji. Plain
// (unquoted) scalars: the parser cuts those out of the text as they are.
const DOMAIN = `version: "3.1"
intents:
  - greet_the_user_politely
slots:
  favourite_colour_of_the_user:
    type: text
    mappings:
      - type: from_text
responses:
  utter_greet_the_user_politely:
    - text: Hello there, how is your day going so far?
  utter_sorry:
    - text: I’m sorry 🙈
  utter_cafe:
    - text: Un café crème, s'il vous plaît
`;

describe('strings read from YAML holding characters above U+00FF', () => {
  it('are one-byte strings wherever their characters allow, with the same values', () => {
    const domain = Domain.fromYaml(DOMAIN);
    const greet = domain.responses.utter_greet_the_user_politely?.[0]?.text as string;
    expect(greet).toBe('Hello there, how is your day going so far?');
    expect(representation(greet)).toBe('one-byte');
    const names = [
      ...domain.actionNamesOrTexts.filter((a) => a.startsWith('utter_')),
      ...domain.intents,
      ...domain.slots.map((s) => s.name),
    ];
    expect(names).toEqual(
      expect.arrayContaining([
        'utter_greet_the_user_politely',
        'greet_the_user_politely',
        'favourite_colour_of_the_user',
      ]),
    );
    for (const name of names) expect(representation(name)).toBe('one-byte');
    // Latin-1 fits one byte; the apostrophe and the emoji do not, and keep their characters.
    const cafe = domain.responses.utter_cafe?.[0]?.text as string;
    expect(cafe).toBe("Un café crème, s'il vous plaît");
    expect(representation(cafe)).toBe('one-byte');
    const sorry = domain.responses.utter_sorry?.[0]?.text as string;
    expect(sorry).toBe('I’m sorry 🙈');
    expect(representation(sorry)).toBe('two-byte');
  });

  it('makes the text built from them one-byte too (templates, stack patches, SQL)', () => {
    const doc = parseYamlSource(DOMAIN, 'domain.yml').doc.toJS() as {
      intents: string[];
      responses: Record<string, Array<{ text: string }>>;
    };
    const text = doc.responses.utter_greet_the_user_politely?.[0]?.text ?? '';
    expect(representation(`{"event": "bot", "text": "${text}"}`)).toBe('one-byte');
    expect(representation(JSON.stringify({ event: 'user', intent: doc.intents[0] }))).toBe(
      'one-byte',
    );
  });

  it('leaves the parser output as it is for a text without such characters', () => {
    const doc = parseYamlSource('a_long_enough_key: plain ascii value here\n', 'x.yml').doc;
    const value = (doc.toJS() as Record<string, string>).a_long_enough_key as string;
    expect(value).toBe('plain ascii value here');
    expect(representation(value)).toBe('one-byte');
  });
});

describe('compactString', () => {
  it('returns an equal string', () => {
    for (const s of ['', 'abc', 'é', 'I’m', '🙈', 'a\u0000b', '"quoted" \\ back']) {
      expect(compactString(s)).toBe(s);
    }
  });
});
