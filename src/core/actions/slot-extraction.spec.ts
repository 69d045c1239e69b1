import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type ActionContext } from 'src/core/actions/action';
import { actionFor } from 'src/core/actions/action-registry';
import { ActionEndpoint } from 'src/core/actions/remote-action';
import { extractSlots, runActionExtractSlots } from 'src/core/actions/slot-extraction';
import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { activeLoop } from 'src/core/events/active-loop';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

interface Call {
  next_action: string;
  tracker: {
    events: { event: string; name?: string; value?: unknown }[];
    slots: Record<string, unknown>;
  };
}

/** rasa-sdk's `Tracker.slots_to_validate`: the `slot` events at the end of the tracker. */
function slotsToValidate(events: Call['tracker']['events']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as Call['tracker']['events'][number];
    if (e.event !== 'slot') break;
    if (!((e.name as string) in out)) out[e.name as string] = e.value;
  }
  return out;
}

/**
 * A loopback action server: `action_extract_city` reads "in <city>" from the latest text (plus a
 * bot message and a `followup` event, both of which Rasa drops); `action_validate_slot_mappings`
 * rejects the city "atlantis" and capitalises the others; `action_broken` answers 500.
 */
async function startServer(): Promise<{ url: string; calls: Call[]; close: () => Promise<void> }> {
  const calls: Call[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const call = JSON.parse(body) as Call & { tracker: { latest_message: { text: string } } };
      calls.push(call);
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (call.next_action === 'action_extract_city') {
        const m = /\bin (\w+)/.exec(call.tracker.latest_message.text);
        send(200, {
          events: [
            ...(m ? [{ event: 'slot', name: 'city', value: m[1] }] : []),
            { event: 'slot', name: 'country', value: call.tracker.slots.country },
            { event: 'followup', name: 'utter_hi' },
          ],
          responses: [{ text: 'looking up the city' }],
        });
        return;
      }
      if (call.next_action === 'action_validate_slot_mappings') {
        const events: unknown[] = [];
        for (const [name, value] of Object.entries(slotsToValidate(call.tracker.events))) {
          if (name !== 'city') continue;
          const city = String(value);
          events.push({
            event: 'slot',
            name,
            value: city === 'atlantis' ? null : city[0]?.toUpperCase() + city.slice(1),
          });
        }
        send(200, { events, responses: [{ text: 'validated' }] });
        return;
      }
      send(500, { error: 'boom' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    calls,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

function domainOf(validate: boolean): Domain {
  return Domain.fromObject({
    intents: ['inform', 'greet'],
    entities: ['mood'],
    slots: {
      city: { type: 'text', mappings: [{ type: 'custom', action: 'action_extract_city' }] },
      country: {
        type: 'text',
        initial_value: 'nowhere',
        mappings: [{ type: 'custom', action: 'action_extract_city' }],
      },
      mood: {
        type: 'text',
        mappings: [
          { type: 'from_entity', entity: 'mood' },
          { type: 'custom', action: 'action_broken' },
        ],
      },
      note: { type: 'text', mappings: [{ type: 'custom' }] },
      greeted: {
        type: 'bool',
        mappings: [{ type: 'custom', action: 'action_extract_city', intent: 'greet' }],
      },
    },
    actions: [
      'action_extract_city',
      'action_broken',
      ...(validate ? ['action_validate_slot_mappings'] : []),
    ],
  });
}

describe('action_extract_slots with custom slot mappings', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.calls.length = 0;
  });

  /** The action context of these tests: the loopback action server, warnings collected. */
  const contextOf = (
    tracker: DialogueStateTracker,
    domain: Domain,
    warnings: string[] = [],
  ): ActionContext => ({
    tracker,
    domain,
    channel: null,
    now: () => 3,
    endpoint: new ActionEndpoint({ url: server.url }, '3.6.0'),
    actionFor: (n) => actionFor(n, domain),
    warn: (m) => warnings.push(m),
  });

  const run = async (
    domain: Domain,
    text: string,
    entities: { entity: string; value: string }[] = [],
  ): Promise<{ events: DialogueEvent[]; warnings: string[] }> => {
    const tracker = new DialogueStateTracker('ann', domain.slots);
    tracker.update(actionExecuted({ name: 'action_listen', timestamp: 1 }));
    tracker.update(
      userUttered({
        text,
        intent: { name: 'inform', confidence: 1 },
        entities,
        timestamp: 2,
      }),
    );
    const warnings: string[] = [];
    return { events: await runActionExtractSlots(contextOf(tracker, domain, warnings)), warnings };
  };

  const slots = (events: DialogueEvent[]) =>
    events.flatMap((e) => (e.type === 'slot' ? [[e.name, e.value]] : []));

  it('runs each mapping action once and keeps only its value-changing slot events', async () => {
    const { events, warnings } = await run(domainOf(false), 'I live in paris', [
      { entity: 'mood', value: 'calm' },
    ]);
    // city comes from the action, mood from its entity (its custom mapping after that is not
    // reached); country's unchanged value, the bot message and the followup event are dropped.
    expect(slots(events)).toEqual([
      ['city', 'paris'],
      ['mood', 'calm'],
    ]);
    expect(events.every((e) => e.type === 'slot')).toBe(true);
    expect(server.calls.map((c) => c.next_action)).toEqual(['action_extract_city']);
    expect(warnings.some((w) => w.includes("event of type 'followup'"))).toBe(true);
  });

  it('skips custom mappings whose intent does not match and logs a failing mapping action', async () => {
    const { events, warnings } = await run(domainOf(false), 'nothing here');
    expect(slots(events)).toEqual([]);
    // greeted's mapping wants `greet`: only city/country call action_extract_city; mood's
    // second mapping calls the broken action, which is only logged.
    expect(server.calls.map((c) => c.next_action)).toEqual([
      'action_extract_city',
      'action_broken',
    ]);
    expect(
      warnings.some((w) => w.includes("Failed to execute custom action 'action_broken'")),
    ).toBe(true);
  });

  it('action_validate_slot_mappings sees the candidates after the user message and may change or reject them', async () => {
    const domain = domainOf(true);
    const accepted = await run(domain, 'I live in paris', [{ entity: 'mood', value: 'calm' }]);
    const validation = server.calls.find((c) => c.next_action === 'action_validate_slot_mappings');
    expect(validation?.tracker.events.slice(-3)).toMatchObject([
      { event: 'user', text: 'I live in paris' },
      { event: 'slot', name: 'city', value: 'paris' },
      { event: 'slot', name: 'mood', value: 'calm' },
    ]);
    // The validator's own events first, then the candidates it did not mention; its bot message stays.
    expect(slots(accepted.events)).toEqual([
      ['city', 'Paris'],
      ['mood', 'calm'],
    ]);
    expect(accepted.events.filter((e) => e.type === 'bot')).toHaveLength(1);

    // Rejected: the validator's `city: null` replaces the candidate (the slot stays unset).
    const rejected = await run(domain, 'I live in atlantis');
    expect(slots(rejected.events)).toEqual([['city', null]]);
  });

  it('a validator setting a slot to null removes a candidate from a slot that had a value', async () => {
    const domain = domainOf(true);
    const tracker = new DialogueStateTracker('bob', domain.slots);
    tracker.update(slotSet({ name: 'city', value: 'Rome', timestamp: 1 }));
    tracker.update(actionExecuted({ name: 'action_listen', timestamp: 1 }));
    tracker.update(
      userUttered({ text: 'in atlantis', intent: { name: 'inform' }, entities: [], timestamp: 2 }),
    );
    const events = await runActionExtractSlots(contextOf(tracker, domain));
    expect(slots(events)).toEqual([['city', null]]);
  });
});

describe('unique-entity check inside a form', () => {
  const domain = Domain.fromObject({
    intents: ['inform'],
    entities: ['city', 'date'],
    slots: {
      origin: { type: 'text', mappings: [{ type: 'from_entity', entity: 'city' }] },
      destination: { type: 'text', mappings: [{ type: 'from_entity', entity: 'city' }] },
      day: { type: 'text', mappings: [{ type: 'from_entity', entity: 'date' }] },
    },
    forms: { trip_form: { required_slots: ['origin', 'destination', 'day'] } },
  });

  function extracted(inForm: boolean, requested: string | null): Record<string, unknown> {
    const tracker = new DialogueStateTracker('u', domain.slots);
    const events: DialogueEvent[] = [actionExecuted({ name: 'action_listen', timestamp: 1 })];
    if (inForm) {
      events.unshift(
        activeLoop({ name: 'trip_form', timestamp: 1 }),
        slotSet({ name: 'requested_slot', value: requested, timestamp: 1 }),
      );
    }
    events.push(
      userUttered({
        text: 'Paris tomorrow',
        intent: { name: 'inform' },
        entities: [
          { entity: 'city', value: 'Paris', start: 0, end: 5 },
          { entity: 'date', value: 'tomorrow', start: 6, end: 14 },
        ],
        timestamp: 1,
      }),
    );
    for (const e of events) tracker.update(e);
    return Object.fromEntries(extractSlots(domain, tracker, 2).map((e) => [e.name, e.value]));
  }

  it('fills only the requested one of the slots that share an entity mapping', () => {
    expect(extracted(true, 'destination')).toEqual({ destination: 'Paris', day: 'tomorrow' });
    expect(extracted(true, 'day')).toEqual({ day: 'tomorrow' });
  });

  it('fills all of them outside the form', () => {
    expect(extracted(false, null)).toEqual({
      origin: 'Paris',
      destination: 'Paris',
      day: 'tomorrow',
    });
  });
});
