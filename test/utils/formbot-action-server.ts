import {
  ran,
  slotsToValidate,
  startActionServer,
  type TestActionServer,
} from 'test/utils/action-server';

const ROOM_TYPES = ['single', 'double', 'suite'];

/**
 * A tiny custom action server speaking rasa-sdk's protocol on loopback, implementing the test
 * form bot's `validate_booking_form` (test/fixtures/formbot): a room type from a list, a positive
 * whole number of guests. A room type of `reject` answers HTTP 400 (ActionExecutionRejection).
 */
export function startFormbotActionServer(): Promise<TestActionServer> {
  return startActionServer({
    validate_booking_form: (call) => {
      const events: Record<string, unknown>[] = [];
      const responses: Record<string, unknown>[] = [];
      for (const [name, value] of Object.entries(slotsToValidate(call.tracker.events))) {
        let result: unknown = value;
        if (name === 'room_type') {
          if (value === 'reject') {
            return {
              status: 400,
              body: { action_name: call.next_action, error: 'room type rejected' },
            };
          }
          if (typeof value !== 'string' || !ROOM_TYPES.includes(value.toLowerCase())) {
            responses.push({ response: 'utter_wrong_room_type' });
            result = null;
          }
        } else if (name === 'guests') {
          const n = Number(value);
          if (!Number.isInteger(n) || n <= 0) {
            responses.push({ response: 'utter_wrong_guests' });
            result = null;
          } else result = n;
        }
        events.push({ event: 'slot', timestamp: null, name, value: result });
      }
      return ran(events, responses);
    },
  });
}
