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

/** The responseselectorbot (NLU + policies) answering retrieval intents through the REST channel. */
describe('responseselectorbot dialogue end to end', () => {
  let t: TrainedBotApp;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(RESPONSESELECTORBOT, 'parley-rsb-dlg-');
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('answers a chitchat question with the selected retrieval response', async () => {
    const sender = uniqueId('rsb');
    const res = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender, message: 'what is the weather like' })
      .expect(200);
    // One of the two variations of utter_chitchat/ask_weather, picked at random as Rasa does.
    expect([
      [
        { recipient_id: sender, text: 'Oh, it does look sunny right now in Berlin.' },
        { recipient_id: sender, image: 'https://i.imgur.com/vwv7aHN.png' },
      ],
      [
        {
          recipient_id: sender,
          text: 'I am not sure of the whole week but I can see the sun is out today.',
        },
      ],
    ]).toContainEqual(res.body);
    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    const bot = (tracker.body.events as Record<string, unknown>[]).find((e) => e.event === 'bot');
    expect(bot?.metadata).toMatchObject({ utter_action: 'utter_chitchat' });
  });

  it('passes its test stories over HTTP with conversation accuracy 1.0', async () => {
    const res = await postTestStories(t.url, join(BOT, 'stories', 'test_stories.yml'));
    expect(res.body.report.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 2,
      with_warnings: 0,
      total: 2,
    });
    expect(res.body.actions).toContainEqual(
      expect.objectContaining({
        action: 'utter_chitchat/ask_name',
        predicted: 'utter_chitchat/ask_name',
      }),
    );
  });
});
