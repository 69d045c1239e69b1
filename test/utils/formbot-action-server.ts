import {
  ran,
  slotsToValidate,
  startActionServer,
  type TestActionServer,
} from 'test/utils/action-server';

const CUISINES = ['caribbean', 'chinese', 'french', 'greek', 'indian', 'italian', 'mexican'];

/**
 * A tiny custom action server speaking rasa-sdk's protocol on loopback, implementing the
 * formbot's `validate_restaurant_form` as its actions.py does (cuisine from a list, a positive
 * integer number of people, outdoor seating from yes/no or "in"/"out"). A cuisine of `reject`
 * answers HTTP 400 (ActionExecutionRejection).
 */
export function startFormbotActionServer(): Promise<TestActionServer> {
  return startActionServer({
    validate_restaurant_form: (call) => {
      const events: Record<string, unknown>[] = [];
      const responses: Record<string, unknown>[] = [];
      for (const [name, value] of Object.entries(slotsToValidate(call.tracker.events))) {
        let result: unknown = value;
        if (name === 'cuisine') {
          if (value === 'reject') {
            return {
              status: 400,
              body: { action_name: call.next_action, error: 'cuisine rejected' },
            };
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
      return ran(events, responses);
    },
  });
}
