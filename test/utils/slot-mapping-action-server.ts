import { createServer, type Server } from 'node:http';
import { type ActionCall } from 'test/utils/formbot-action-server';

type EventJson = Record<string, unknown>;

/** rasa-sdk's `Tracker.slots_to_validate`: the slot events at the end of the tracker. */
function slotsToValidate(events: EventJson[]): Record<string, unknown> {
  const slots: Record<string, unknown> = {};
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as EventJson;
    if (e.event !== 'slot') break;
    if (!((e.name as string) in slots)) slots[e.name as string] = e.value;
  }
  return slots;
}

/**
 * A custom action server on loopback for test/fixtures/custom-slots, answering as rasa-sdk
 * would: `action_extract_city` (the `city` slot's custom mapping) sets `city` from the latest
 * message's `place` entity; `action_validate_slot_mappings` (a `ValidationAction`) rejects the
 * city "atlantis" with `utter_unknown_city` and capitalises the others.
 */
export async function startSlotMappingActionServer(): Promise<{
  url: string;
  calls: ActionCall[];
  close: () => Promise<void>;
}> {
  const calls: ActionCall[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const call = JSON.parse(body) as ActionCall & {
        tracker: { latest_message: { entities: { entity: string; value: unknown }[] } };
      };
      calls.push(call);
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (call.next_action === 'action_extract_city') {
        const place = call.tracker.latest_message.entities.find((e) => e.entity === 'place');
        send(200, {
          events: place
            ? [{ event: 'slot', timestamp: null, name: 'city', value: place.value }]
            : [],
          responses: [],
        });
        return;
      }
      if (call.next_action === 'action_validate_slot_mappings') {
        const events: EventJson[] = [];
        const responses: EventJson[] = [];
        const city = slotsToValidate(call.tracker.events).city;
        if (typeof city === 'string') {
          if (city.toLowerCase() === 'atlantis') {
            responses.push({ response: 'utter_unknown_city' });
            events.push({ event: 'slot', timestamp: null, name: 'city', value: null });
          } else {
            const value = city.charAt(0).toUpperCase() + city.slice(1);
            events.push({ event: 'slot', timestamp: null, name: 'city', value });
          }
        }
        send(200, { events, responses });
        return;
      }
      send(404, { error: `no action ${call.next_action}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
