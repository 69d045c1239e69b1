import { setTimeout as delay } from 'node:timers/promises';
import {
  ran,
  slotsToValidate,
  startActionServer,
  type TestActionServer,
} from 'test/utils/action-server';

/** How long `action_extract_city` takes for the place "slowtown". */
export const SLOW_ACTION_MS = 600;

/**
 * The action server of test/fixtures/custom-slots, answering as rasa-sdk would:
 * `action_extract_city` (the `city` slot's custom mapping) sets `city` from the latest message's
 * `place` entity; `action_validate_slot_mappings` (a `ValidationAction`) rejects the city
 * "atlantis" with `utter_unknown_city` and capitalises the others. The place "slowtown" takes
 * `SLOW_ACTION_MS` to extract, for tests of what happens while a turn is under way.
 */

export function startSlotMappingActionServer(): Promise<TestActionServer> {
  return startActionServer({
    action_extract_city: async (call) => {
      const place = call.tracker.latest_message.entities.find((e) => e.entity === 'place');
      if (place?.value === 'slowtown') await delay(SLOW_ACTION_MS);
      return ran(
        place ? [{ event: 'slot', timestamp: null, name: 'city', value: place.value }] : [],
      );
    },
    action_validate_slot_mappings: (call) => {
      const city = slotsToValidate(call.tracker.events).city;
      if (typeof city !== 'string') return ran([]);
      if (city.toLowerCase() === 'atlantis') {
        return ran(
          [{ event: 'slot', timestamp: null, name: 'city', value: null }],
          [{ response: 'utter_unknown_city' }],
        );
      }
      const value = city.charAt(0).toUpperCase() + city.slice(1);
      return ran([{ event: 'slot', timestamp: null, name: 'city', value }]);
    },
  });
}
