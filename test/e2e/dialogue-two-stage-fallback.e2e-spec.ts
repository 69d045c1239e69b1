import { join } from 'node:path';
import request from 'supertest';
import { botFiles, startAppWithTrainedBot, type TrainedBotApp } from 'test/utils/bots';
import { FIXTURES, uniqueId } from 'test/utils/create-test-app';

/**
 * `action_two_stage_fallback` held over the REST channel, as Rasa's `TwoStageFallbackAction`
 * runs it: a message below the FallbackClassifier threshold is `nlu_fallback`; the bot asks to
 * affirm its best guess (buttons Yes → `/<intent>`, No → `/out_of_scope`); a Yes replays the
 * message as that intent; a No asks to rephrase; a second failure ends in
 * `action_default_fallback`.
 */
describe('two-stage fallback over the REST channel', () => {
  let t: TrainedBotApp;
  const say = async (sender: string, message: string) =>
    (await request(t.url).post('/webhooks/rest/webhook').send({ sender, message }).expect(200))
      .body as Array<Record<string, unknown>>;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(botFiles(join(FIXTURES, 'fallbackbot')), 'parley-2sf-');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  it('asks to affirm the best guess; Yes continues as if understood at once', async () => {
    const id = uniqueId('2sf-yes');
    const asked = await say(id, 'is it sunny outside');
    expect(asked).toEqual([
      {
        recipient_id: id,
        text: "Did you mean 'ask_weather'?",
        buttons: [
          { title: 'Yes', payload: '/ask_weather' },
          { title: 'No', payload: '/out_of_scope' },
        ],
      },
    ]);
    expect(await say(id, '/ask_weather')).toEqual([
      { recipient_id: id, text: 'It is sunny today.' },
    ]);
    // The fallback turns were rewound: the tracker reads as one understood question.
    const tracker = await request(t.url).get(`/conversations/${id}/tracker`).expect(200);
    expect(tracker.body.active_loop).toEqual({});
    expect(tracker.body.latest_message.intent.name).toBe('ask_weather');
    const kinds = (tracker.body.events as Array<{ event: string; name?: string }>)
      .filter((e) => e.event === 'rewind' || e.event === 'user_featurization')
      .map((e) => e.event);
    expect(kinds).toContain('rewind');
  });

  it('No asks to rephrase; a second No ends in the default fallback', async () => {
    const id = uniqueId('2sf-no');
    expect((await say(id, 'hello'))[0]).toMatchObject({ text: "Did you mean 'greet'?" });
    expect(await say(id, '/out_of_scope')).toEqual([
      { recipient_id: id, text: 'Could you say that in other words?' },
    ]);
    expect((await say(id, 'good morning'))[0]).toMatchObject({ text: "Did you mean 'greet'?" });
    expect(await say(id, '/out_of_scope')).toEqual([
      { recipient_id: id, text: 'I am lost, let us start over.' },
    ]);
    const tracker = await request(t.url).get(`/conversations/${id}/tracker`).expect(200);
    expect(tracker.body.active_loop).toEqual({});
  });
});
