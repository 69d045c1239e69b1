import { join } from 'node:path';
import request from 'supertest';
import {
  postTestStories,
  RESPONSESELECTORBOT,
  RESPONSESELECTORBOT_DIR,
  startAppWithTrainedBot,
  type TrainedBotApp,
} from 'test/utils/bots';
import { uniqueId } from 'test/utils/create-test-app';

const BOT = RESPONSESELECTORBOT_DIR;

/** A bike shop bot (NLU + policies) answering retrieval intents through the REST channel. */
describe('responseselectorbot dialogue end to end', () => {
  let t: TrainedBotApp;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(RESPONSESELECTORBOT, 'parley-rsb-dlg-');
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('answers a question with the selected retrieval response', async () => {
    const sender = uniqueId('rsb');
    const res = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender, message: 'where is the shop' })
      .expect(200);
    // One of the two variations of utter_faq/ask_location, picked at random as Rasa does.
    expect([
      [
        { recipient_id: sender, text: 'We are at 12 Harbour Street, next to the station.' },
        { recipient_id: sender, image: 'https://images.example.org/parley/bike-shop-map.png' },
      ],
      [{ recipient_id: sender, text: 'You find us on Harbour Street, number 12.' }],
    ]).toContainEqual(res.body);
    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    const bot = (tracker.body.events as Record<string, unknown>[]).find((e) => e.event === 'bot');
    expect(bot?.metadata).toMatchObject({ utter_action: 'utter_faq' });
  });

  it('passes its test stories over HTTP with conversation accuracy 1.0', async () => {
    const res = await postTestStories(t.url, join(BOT, 'tests', 'test_stories.yml'));
    expect(res.body.report.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 2,
      with_warnings: 0,
      total: 2,
    });
    expect(res.body.actions).toContainEqual(
      expect.objectContaining({
        action: 'utter_faq/ask_name',
        predicted: 'utter_faq/ask_name',
      }),
    );
  });
});
