import { createServer, type Server } from 'node:http';

/** What the test action server received. */
export interface ActionCall {
  readonly next_action: string;
  readonly sender_id: string;
  readonly tracker: { events: Record<string, unknown>[]; slots: Record<string, unknown> };
  readonly domain: Record<string, unknown>;
  readonly version: string;
}

const CUISINES = ['caribbean', 'chinese', 'french', 'greek', 'indian', 'italian', 'mexican'];

/** rasa-sdk's `Tracker.slots_to_validate`: the slot events at the end of the tracker. */
function slotsToValidate(events: Record<string, unknown>[]): Record<string, unknown> {
  const slots: Record<string, unknown> = {};
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as Record<string, unknown>;
    if (e.event !== 'slot') break;
    if (!((e.name as string) in slots)) slots[e.name as string] = e.value;
  }
  return slots;
}

/**
 * A tiny custom action server speaking rasa-sdk's protocol on loopback, implementing the
 * formbot's `validate_restaurant_form` as its actions.py does (cuisine from a list, a positive
 * integer number of people, outdoor seating from yes/no or "in"/"out"). A cuisine of `reject`
 * answers HTTP 400 (ActionExecutionRejection).
 */
export async function startFormbotActionServer(): Promise<{
  url: string;
  calls: ActionCall[];
  close: () => Promise<void>;
}> {
  const calls: ActionCall[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const call = JSON.parse(body) as ActionCall;
      calls.push(call);
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (call.next_action !== 'validate_restaurant_form') {
        send(404, { error: `no action ${call.next_action}` });
        return;
      }
      const events: Record<string, unknown>[] = [];
      const responses: Record<string, unknown>[] = [];
      for (const [name, value] of Object.entries(slotsToValidate(call.tracker.events))) {
        let result: unknown = value;
        if (name === 'cuisine') {
          if (value === 'reject') {
            send(400, { action_name: call.next_action, error: 'cuisine rejected' });
            return;
          }
          if (typeof value !== 'string' || !CUISINES.includes(value.toLowerCase())) {
            responses.push({ response: 'utter_wrong_cuisine' });
            result = null;
          }
        } else if (name === 'num_people') {
          const n = Number(value);
          if (!Number.isInteger(n) || n <= 0) {
            responses.push({ response: 'utter_wrong_num_people' });
            result = null;
          } else result = n;
        } else if (name === 'outdoor_seating' && typeof value === 'string') {
          if (value.includes('out')) result = true;
          else if (value.includes('in')) result = false;
          else {
            responses.push({ response: 'utter_wrong_outdoor_seating' });
            result = null;
          }
        }
        events.push({ event: 'slot', timestamp: null, name, value: result });
      }
      send(200, { events, responses });
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
