import {
  ran,
  slotsToValidate,
  startActionServer,
  type TestActionServer,
} from 'test/utils/action-server';

/**
 * The action server of test/fixtures/custom-slots, answering as rasa-sdk would:
 * `action_extract_city` (the `city` slot's custom mapping) sets `city` from the latest message's
 * `place` entity; `action_validate_slot_mappings` (a `ValidationAction`) rejects the city
 * "atlantis" with `utter_unknown_city` and capitalises the others.
 */
export function startSlotMappingActionServer(): Promise<TestActionServer> {
  return startActionServer({
    action_extract_city: (call) => {
      const place = call.tracker.latest_message.entities.find((e) => e.entity === 'place');
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
