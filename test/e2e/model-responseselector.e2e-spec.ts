import request from 'supertest';
import { RESPONSESELECTORBOT, startAppWithTrainedBot, type TrainedBotApp } from 'test/utils/bots';

/**
 * The responseselectorbot's NLU (retrieval intents chitchat/* with their responses) trained by
 * the CLI, loaded through PUT /model and parsed over HTTP.
 */
describe('responseselectorbot end to end', () => {
  let t: TrainedBotApp;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(RESPONSESELECTORBOT, 'parley-rsb-');
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('selects the retrieval response of a chitchat question', async () => {
    const res = await request(t.url)
      .post('/model/parse')
      .send({ text: 'what is the weather like' })
      .expect(200);
    expect(res.body.intent.name).toBe('chitchat');
    expect(res.body.intent.full_retrieval_intent_name).toBe('chitchat/ask_weather');
    const selected = res.body.response_selector.default.response;
    expect(selected.intent_response_key).toBe('chitchat/ask_weather');
    expect(selected.utter_action).toBe('utter_chitchat/ask_weather');
    expect(selected.responses[0].text).toMatch(/sunny/);
    expect(res.body.response_selector.all_retrieval_intents).toEqual(['chitchat']);
  });

  it('parses the bot’s ordinary intents too', async () => {
    const res = await request(t.url).post('/model/parse').send({ text: 'hello there' }).expect(200);
    expect(res.body.intent.name).toBe('greet');
  });
});
