import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Domain } from 'src/core/domain/domain';
import { DEFAULT_ACTION_NAMES } from 'src/core/domain/domain-constants';
import { type DialogueError } from 'src/core/errors/dialogue-error';

/** The test bots (test/fixtures). */
const BOTS = join(__dirname, '..', '..', '..', 'test', 'fixtures');
const read = (bot: string): string => readFileSync(`${BOTS}/${bot}/domain.yml`, 'utf8');

function errorOf(fn: () => unknown): DialogueError {
  try {
    fn();
  } catch (e) {
    return e as DialogueError;
  }
  throw new Error('expected an error');
}

describe(Domain.name, () => {
  it('has Rasa 3.x default actions, with action_listen first', () => {
    expect(DEFAULT_ACTION_NAMES[0]).toBe('action_listen');
    expect(DEFAULT_ACTION_NAMES).toContain('action_extract_slots');
  });

  it('parses the mood bot domain', () => {
    const domain = Domain.fromYaml(read('moodbot'), 'domain.yml');
    expect(domain.intents).toEqual([
      'affirm',
      'back',
      'bot_challenge',
      'deny',
      'goodbye',
      'greet',
      'mood_great',
      'mood_unhappy',
      'nlu_fallback',
      'out_of_scope',
      'restart',
      'session_start',
    ]);
    expect(domain.entities).toEqual([]);
    expect(domain.slots.map((s) => s.name)).toEqual(['session_started_metadata']);
    expect(Object.keys(domain.responses)).toContain('utter_cheer_up');
    expect(domain.responses.utter_greet?.[0]).toMatchObject({
      text: 'Hi there! How is your day going?',
    });
    expect(domain.userActions).toEqual([
      'utter_cheer_up',
      'utter_did_that_help',
      'utter_goodbye',
      'utter_greet',
      'utter_happy',
      'utter_iamabot',
    ]);
    expect(domain.actionNamesOrTexts.slice(0, DEFAULT_ACTION_NAMES.length)).toEqual(
      DEFAULT_ACTION_NAMES,
    );
    expect(domain.sessionConfig).toEqual({ sessionExpirationTime: 60, carryOverSlots: true });
    expect(domain.storeEntitiesAsSlots).toBe(true);
    const json = domain.toJSON();
    expect(Object.keys(json)).toEqual([
      'version',
      'intents',
      'entities',
      'slots',
      'responses',
      'actions',
      'forms',
      'e2e_actions',
      'session_config',
      'config',
    ]);
    expect(json.intents).toEqual([
      { affirm: { use_entities: true } },
      { bot_challenge: { use_entities: true } },
      { deny: { use_entities: true } },
      { goodbye: { use_entities: true } },
      { greet: { use_entities: true } },
      { mood_great: { use_entities: true } },
      { mood_unhappy: { use_entities: true } },
    ]);
    expect(json.slots).toEqual({});
    expect(json.session_config).toEqual({
      session_expiration_time: 60,
      carry_over_slots_to_new_session: true,
    });
    expect(json.config).toEqual({ store_entities_as_slots: true });
  });

  it('parses the form bot domain with default slots after the declared ones', () => {
    const domain = Domain.fromYaml(read('formbot'));
    expect(domain.slots.map((s) => s.name)).toEqual([
      'room_type',
      'guests',
      'breakfast',
      'requests',
      'requested_slot',
      'session_started_metadata',
    ]);
    expect(domain.slot('guests')).toMatchObject({
      type: 'float',
      influenceConversation: false,
      minValue: 0,
      maxValue: 1,
      initialValue: null,
    });
    expect(domain.slot('breakfast')?.mappings).toHaveLength(2);
    expect(domain.slot('requests')?.mappings).toHaveLength(2);
    expect(domain.slot('requested_slot')).toMatchObject({
      type: 'text',
      influenceConversation: false,
    });
    expect(domain.slot('session_started_metadata')).toMatchObject({ type: 'any' });
    expect(domain.entities).toEqual(['number', 'room_type']);
    expect(domain.intent('request_booking')).toMatchObject({
      useEntities: [],
      usedEntities: [],
    });
    expect(domain.intent('inform')?.usedEntities).toEqual(['number', 'room_type']);
    expect(domain.formNames).toEqual(['booking_form']);
    expect(domain.forms.booking_form).toMatchObject({
      ignored_intents: ['chitchat'],
      required_slots: ['room_type', 'guests', 'breakfast', 'requests'],
    });
    expect(domain.customActions).toEqual(['validate_booking_form']);
    expect(domain.actionNamesOrTexts).toContain('booking_form');
    const json = domain.toJSON();
    expect((json.intents as unknown[])[0]).toEqual({ affirm: { use_entities: true } });
    expect(json.intents).toContainEqual({ request_booking: { use_entities: [] } });
    expect(Object.keys(json.slots as object)).toEqual([
      'room_type',
      'guests',
      'breakfast',
      'requests',
    ]);
    expect((json.slots as Record<string, unknown>).guests).toEqual({
      type: 'float',
      initial_value: null,
      influence_conversation: false,
      mappings: [{ type: 'from_entity', entity: 'number', intent: ['inform', 'request_booking'] }],
      max_value: 1,
      min_value: 0,
    });
    expect(json.actions).toEqual(['validate_booking_form']);
  });

  it('has only defaults when empty', () => {
    const domain = Domain.empty();
    expect(domain.isEmpty()).toBe(true);
    expect(domain.slots.map((s) => s.name)).toEqual(['session_started_metadata']);
    expect(domain.intents).toEqual([
      'back',
      'nlu_fallback',
      'out_of_scope',
      'restart',
      'session_start',
    ]);
    expect(Domain.fromYaml('')).toBeInstanceOf(Domain);
  });

  it('reads session config, config and entity roles', () => {
    const domain = Domain.fromYaml(
      [
        'intents: [inform]',
        'entities:',
        '- city:',
        '    roles: [from, to]',
        '- name',
        'session_config:',
        '  session_expiration_time: 0',
        '  carry_over_slots_to_new_session: false',
        'config:',
        '  store_entities_as_slots: false',
      ].join('\n'),
    );
    expect(domain.sessionConfig).toEqual({ sessionExpirationTime: 0, carryOverSlots: false });
    expect(domain.storeEntitiesAsSlots).toBe(false);
    expect(domain.intent('inform')?.usedEntities).toEqual(['city', 'city#from', 'city#to', 'name']);
    expect(domain.toJSON().entities).toEqual([{ city: { roles: ['from', 'to'] } }, 'name']);
  });

  it('names source, line and problem for invalid YAML', () => {
    const error = errorOf(() => Domain.fromYaml('intents:\n  - greet\n  bad: [', 'my-domain.yml'));
    expect(error.code).toBe('DOMAIN.INVALID');
    expect(error.message).toMatch(/^my-domain\.yml:\d+: invalid YAML: /);
    expect(error.details).toMatchObject({ file: 'my-domain.yml', line: expect.any(Number) });
  });

  it('rejects duplicate keys', () => {
    const error = errorOf(() => Domain.fromYaml('slots: {}\nslots: {}\n'));
    expect(error.code).toBe('DOMAIN.INVALID');
    expect(error.message).toMatch(/^domain\.yml:2: /);
  });

  it.each([
    ['slots:\n  a:\n    type: nonsense\n', /domain\.yml:3: failed to find slot type 'nonsense'/],
    ['slots:\n  a:\n    mappings: []\n', /domain\.yml:3: slot 'a' needs a 'type'/],
    [
      'slots:\n  a:\n    type: any\n    influence_conversation: true\n',
      /AnySlot cannot be featurized/,
    ],
    ['intents:\n- greet\n- greet\n', /intents are not unique: duplicate greet/],
    ['intents:\n- greet:\n', /the intent 'greet' cannot have an empty value/],
    ['- just a list\n', /the domain must be a mapping/],
    ['slots:\n  f:\n    type: float\n    min_value: 2\n    max_value: 1\n', /invalid range/],
  ])('rejects %j', (yaml, message) => {
    const error = errorOf(() => Domain.fromYaml(yaml));
    expect(error.code).toBe('DOMAIN.INVALID');
    expect(error.message).toMatch(message);
  });
});
