import {
  type ActionCall,
  type ActionReply,
  ran,
  slotsToValidate,
  startActionServer,
  type TestActionServer,
} from 'test/utils/action-server';

/**
 * rasa-sdk's `CollectingDispatcher.utter_message`: every message carries all its keys, with
 * empty lists and objects and nulls for what the action did not say. Rasa's output channels
 * drop the empty ones (`OutputChannel.send_response`), so one utter_message is one message.
 */
export function utter(message: {
  text?: string;
  response?: string;
  image?: string;
  buttons?: { title: string; payload: string }[];
  custom?: Record<string, unknown>;
}): Record<string, unknown> {
  return {
    text: message.text ?? null,
    buttons: message.buttons ?? [],
    elements: [],
    custom: message.custom ?? {},
    template: message.response ?? null,
    response: message.response ?? null,
    image: message.image ?? null,
    attachment: null,
  };
}

/** rasa-sdk's `SlotSet(name, value)` as serialised on the wire. */
export function slotSet(name: string, value: unknown): Record<string, unknown> {
  return { event: 'slot', timestamp: null, name, value };
}

/** rasa-sdk's `tracker.get_latest_entity_values(entity)`: the first such entity's value. */
export function latestEntity(call: ActionCall, entity: string): unknown {
  return call.tracker.latest_message.entities.find((e) => e.entity === entity)?.value;
}

/** rasa-sdk's `tracker.latest_message["intent"]["name"]`. */
export function latestIntent(call: ActionCall): string | undefined {
  const latest = call.tracker.latest_message as { intent?: { name?: string } };
  return latest.intent?.name;
}

/** Python's `str()` of a JSON value (lists/dicts as `repr`), as f-strings render slot values. */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number') return Number.isInteger(value) ? `${value}` : `${value}`;
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `'${k}': ${pythonRepr(v)}`)
    .join(', ')}}`;
}

type Handler = (call: ActionCall) => ActionReply | Promise<ActionReply>;

/**
 * rasa-sdk's `FormValidationAction.run`: calls `validate_<slot>` for every slot the form just
 * extracted (the slot events at the end of the tracker) and returns one SlotSet per slot.
 */
export function formValidation(
  validators: Record<
    string,
    (value: unknown, call: ActionCall, say: (m: Record<string, unknown>) => void) => unknown
  >,
): Handler {
  return (call) => {
    const events: Record<string, unknown>[] = [];
    const responses: Record<string, unknown>[] = [];
    for (const [name, value] of Object.entries(slotsToValidate(call.tracker.events))) {
      const validate = validators[name];
      const result = validate ? validate(value, call, (m) => responses.push(m)) : value;
      events.push(slotSet(name, result));
    }
    return ran(events, responses);
  };
}

// ---- formbot (examples/formbot/actions/actions.py) -------------------------------------------

const CUISINE_DB = ['caribbean', 'chinese', 'french', 'greek', 'indian', 'italian', 'mexican'];

export const FORMBOT_ACTIONS: Record<string, Handler> = {
  validate_restaurant_form: formValidation({
    cuisine: (value, _call, say) => {
      if (typeof value === 'string' && CUISINE_DB.includes(value.toLowerCase())) return value;
      say(utter({ response: 'utter_wrong_cuisine' }));
      return null;
    },
    num_people: (value, _call, say) => {
      const n = Number(value);
      if (Number.isInteger(n) && n > 0) return value;
      say(utter({ response: 'utter_wrong_num_people' }));
      return null;
    },
    outdoor_seating: (value, _call, say) => {
      if (typeof value !== 'string') return value;
      if (value.includes('out')) return true;
      if (value.includes('in')) return false;
      say(utter({ response: 'utter_wrong_outdoor_seating' }));
      return null;
    },
  }),
};

// ---- rules (examples/rules/actions/actions.py) -----------------------------------------------

export const RULES_ACTIONS: Record<string, Handler> = {
  action_switch_faq: (call) =>
    ran([slotSet('detailed_faq', !(call.tracker.slots.detailed_faq as boolean | null))]),
};

// ---- reminderbot (examples/reminderbot/actions/actions.py) -----------------------------------

/** How long after `action_set_reminder` the reminder fires (the example says 5 seconds). */
export const REMINDER_SECONDS = 2;

/** Python's naive `datetime.now().isoformat()` in this process's local time. */
function naiveLocalIso(date: Date): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `.${pad(date.getMilliseconds(), 3)}000`
  );
}

export const REMINDERBOT_ACTIONS: Record<string, Handler> = {
  action_set_reminder: (call) =>
    ran(
      [
        {
          event: 'reminder',
          timestamp: null,
          intent: 'EXTERNAL_reminder',
          entities: call.tracker.latest_message.entities,
          date_time: naiveLocalIso(new Date(Date.now() + REMINDER_SECONDS * 1000)),
          name: 'my_reminder',
          kill_on_user_msg: false,
        },
      ],
      [utter({ text: `I will remind you in ${REMINDER_SECONDS} seconds.` })],
    ),
  action_react_to_reminder: (call) => {
    // next(tracker.get_latest_entity_values("PERSON"), "someone")
    const name = latestEntity(call, 'PERSON');
    return ran(
      [],
      [utter({ text: `Remember to call ${typeof name === 'string' ? name : 'someone'}!` })],
    );
  },
  action_tell_id: (call) =>
    ran(
      [],
      [
        utter({ text: `The ID of this conversation is '${call.sender_id}'.` }),
        utter({
          text:
            `Trigger an intent with: \n` +
            `curl -H "Content-Type: application/json" -X POST -d '{"name": "EXTERNAL_dry_plant", ` +
            `"entities": {"plant": "Orchid"}}' "http://localhost:5005/conversations/${call.sender_id}` +
            `/trigger_intent?output_channel=latest"`,
        }),
      ],
    ),
  action_warn_dry: (call) => {
    const plant = latestEntity(call, 'plant');
    return ran(
      [],
      [utter({ text: `Your ${typeof plant === 'string' ? plant : 'someone'} needs some water!` })],
    );
  },
  action_forget_reminders: () =>
    ran(
      [{ event: 'cancel_reminder', timestamp: null }],
      [utter({ text: "Okay, I'll cancel all your reminders." })],
    ),
};

// ---- concertbot (examples/concertbot/actions/actions.py) -------------------------------------

export const CONCERTS = [
  { artist: 'Foo Fighters', reviews: 4.5 },
  { artist: 'Katy Perry', reviews: 4.9 },
];
export const VENUES = [
  { name: 'Big Arena', reviews: 4.5 },
  { name: 'Rock Cellar', reviews: 4.9 },
];

export const CONCERTBOT_ACTIONS: Record<string, Handler> = {
  action_search_concerts: () =>
    ran(
      [slotSet('concerts', CONCERTS)],
      [utter({ text: CONCERTS.map((c) => c.artist).join(', ') })],
    ),
  action_search_venues: () =>
    ran(
      [slotSet('venues', VENUES)],
      [
        utter({ text: 'here are some venues I found' }),
        utter({ text: VENUES.map((v) => v.name).join(', ') }),
      ],
    ),
  action_show_concert_reviews: (call) =>
    ran(
      [],
      [
        utter({
          text: `concerts from highest to lowest: ${pythonRepr(call.tracker.slots.concerts)}`,
        }),
      ],
    ),
  action_show_venue_reviews: (call) =>
    ran(
      [],
      [utter({ text: `venues from highest to lowest: ${pythonRepr(call.tracker.slots.venues)}` })],
    ),
  action_set_music_preference: (call) => {
    const intent = latestIntent(call);
    if (intent === 'affirm') return ran([slotSet('likes_music', true)]);
    if (intent === 'deny') return ran([slotSet('likes_music', false)]);
    return ran([]);
  },
};

// ---- knowledgebasebot (rasa-sdk's ActionQueryKnowledgeBase over an InMemoryKnowledgeBase) ----

export const KNOWLEDGE_BASE: Record<string, Record<string, unknown>[]> = {
  restaurant: [
    { id: 0, name: 'Donath', cuisine: 'Italian', 'price-range': 'mid-range', city: 'Berlin' },
    { id: 1, name: 'Berlin Burrito Company', cuisine: 'Mexican', city: 'Berlin' },
    { id: 2, name: 'I due forni', cuisine: 'Italian', city: 'Berlin' },
    { id: 3, name: 'Pfefferberg', cuisine: 'German', city: 'Berlin' },
  ],
  hotel: [
    { id: 0, name: 'Hilton', city: 'Berlin', 'star-rating': 5 },
    { id: 1, name: 'B&B', city: 'Berlin', 'star-rating': 1 },
    { id: 2, name: 'Berlin Wall Hostel', city: 'Berlin', 'star-rating': 2 },
  ],
};

export const KNOWLEDGEBASEBOT_ACTIONS: Record<string, Handler> = {
  action_query_knowledge_base: (call) => {
    const objectType = call.tracker.slots.object_type as string | null;
    const objects = objectType ? KNOWLEDGE_BASE[objectType] : undefined;
    if (!objectType) return ran([], [utter({ response: 'utter_ask_rephrase' })]);
    if (!objects || objects.length === 0) {
      return ran(
        [slotSet('mention', null), slotSet('attribute', null)],
        [utter({ text: `I could not find any objects of type '${objectType}'.` })],
      );
    }
    const listed = objects.slice(0, 5);
    return ran(
      [
        slotSet('object_type', objectType),
        slotSet('mention', null),
        slotSet('attribute', null),
        // rasa-sdk's bookkeeping slots; this domain (converted from Rasa 1.x) lacks them, and
        // Rasa ignores SlotSet events for slots the domain does not have.
        slotSet('knowledge_base_last_object_type', objectType),
        slotSet(
          'knowledge_base_listed_objects',
          listed.map((o) => o.id),
        ),
      ],
      [
        utter({ text: `Found the following objects of type '${objectType}':` }),
        ...listed.map((o, i) => utter({ text: `${i + 1}: ${String(o.name)}` })),
      ],
    );
  },
};

// ---- form-examples (rasa-3.x-form-examples/*/actions/actions.py) -----------------------------

function sayShirtSize(call: ActionCall): ActionReply {
  const size = call.tracker.slots.shirt_size as string | null;
  return ran(
    [],
    [utter({ text: size ? `Your shirt size is ${size}!` : "I don't know your shirt size." })],
  );
}

const validateName = (
  value: unknown,
  _call: ActionCall,
  say: (m: Record<string, unknown>) => void,
): unknown => {
  if (typeof value === 'string' && value.length <= 2) {
    say(utter({ text: "That's a very short name. I'm assuming you mis-spelled." }));
    return null;
  }
  return value;
};

export const FORM_EXAMPLES_ACTIONS: Record<string, Handler> = {
  // str(datetime.now()): `2026-01-31 12:00:00.123000`
  action_show_time: () => ran([], [utter({ text: naiveLocalIso(new Date()).replace('T', ' ') })]),
  action_say_shirt_size: sayShirtSize,
  validate_name_form: formValidation({
    first_name: validateName,
    last_name: validateName,
  }),
};

/** One action server answering every bot's custom actions (names do not collide). */
export function startLiveActionServer(): Promise<TestActionServer> {
  return startActionServer({
    ...FORMBOT_ACTIONS,
    ...RULES_ACTIONS,
    ...REMINDERBOT_ACTIONS,
    ...CONCERTBOT_ACTIONS,
    ...KNOWLEDGEBASEBOT_ACTIONS,
    ...FORM_EXAMPLES_ACTIONS,
  });
}
