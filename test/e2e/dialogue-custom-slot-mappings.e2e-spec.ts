import { join } from 'node:path';
import request from 'supertest';
import { withEndpointsFile } from 'test/utils/action-server';
import {
  botFiles,
  sayRestTexts,
  startAppWithTrainedBot,
  type TrainedBotApp,
} from 'test/utils/bots';
import { FIXTURES, uniqueId } from 'test/utils/create-test-app';
import {
  SLOW_ACTION_MS,
  startSlotMappingActionServer,
} from 'test/utils/slot-mapping-action-server';

const BOT = botFiles(join(FIXTURES, 'custom-slots'));

/**
 * A `custom` slot mapping run by `action_extract_slots` on a real action server (loopback), its
 * candidates checked by `action_validate_slot_mappings`, through the REST channel.
 */
describe('custom slot mappings end to end', () => {
  let t: TrainedBotApp;
  let actions: Awaited<ReturnType<typeof withEndpointsFile>>;

  beforeAll(async () => {
    actions = await withEndpointsFile(startSlotMappingActionServer());
    t = await startAppWithTrainedBot(BOT, 'parley-custom-slots-', {
      env: { PARLEY_ENDPOINTS: actions.endpoints },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await actions?.close();
  });

  const say = (sender: string, message: string): Promise<unknown[]> =>
    sayRestTexts(t.url, sender, message);

  it('fills the slot through the mapping action and the validation action', async () => {
    const s = uniqueId('city');
    expect(await say(s, '/greet')).toEqual(['Hi! Where do you live?']);
    expect(await say(s, '/inform{"place": "paris"}')).toEqual(['You live in Paris.']);
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    expect(tracker.body.slots.city).toBe('Paris');
    const mine = actions.calls.filter((c) => c.sender_id === s).map((c) => c.next_action);
    // After each user message: the mapping action, then the validation action.
    expect(mine).toEqual([
      'action_extract_city',
      'action_validate_slot_mappings',
      'action_extract_city',
      'action_validate_slot_mappings',
    ]);
    const validation = actions.calls.filter((c) => c.sender_id === s)[3];
    expect(validation?.tracker.events.at(-1)).toMatchObject({
      event: 'slot',
      name: 'city',
      value: 'paris',
    });
  });

  it('a city rejected by action_validate_slot_mappings stays unset, with the validator message', async () => {
    const s = uniqueId('city');
    expect(await say(s, '/inform{"place": "atlantis"}')).toEqual([
      'I do not know that city.',
      'I did not get your city.',
    ]);
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    expect(tracker.body.slots.city).toBeNull();
  });

  it('a tracker write waits for the turn under way on its conversation, which runs its action once', async () => {
    const s = uniqueId('city');
    const calls = (): string[] =>
      actions.calls.filter((c) => c.sender_id === s).map((c) => c.next_action);
    const turn = say(s, '/inform{"place": "slowtown"}');
    // The turn is inside the slow custom action: the same conversation gets a slot event.
    const deadline = Date.now() + SLOW_ACTION_MS;
    while (!calls().includes('action_extract_city') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(calls()).toEqual(['action_extract_city']);
    await request(t.url)
      .post(`/conversations/${s}/tracker/events`)
      .send({ event: 'slot', name: 'city', value: 'Rome' })
      .expect(200);

    expect(await turn).toEqual(['You live in Slowtown.']);
    // One run of the turn: no conflict made it start over and call the action server again.
    expect(calls()).toEqual(['action_extract_city', 'action_validate_slot_mappings']);
    // The write came after the whole turn.
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    const events = tracker.body.events as Array<{ event: string; name?: string; value?: unknown }>;
    expect(events.slice(-3).map((e) => [e.event, e.name ?? null, e.value ?? null])).toEqual([
      ['bot', null, null],
      ['action', 'action_listen', null],
      ['slot', 'city', 'Rome'],
    ]);
    expect(tracker.body.slots.city).toBe('Rome');
  });
});
