import request from 'supertest';
import { RESPONSESELECTORBOT, startAppWithTrainedBot, type TrainedBotApp } from 'test/utils/bots';

/**
 * A response-selector bot's NLU (retrieval intents faq/* with their responses) trained by
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

  it('selects the retrieval response of a question', async () => {
    const res = await request(t.url)
      .post('/model/parse')
      .send({ text: 'where is the shop' })
      .expect(200);
    expect(res.body.intent.name).toBe('faq');
    expect(res.body.intent.full_retrieval_intent_name).toBe('faq/ask_location');
    const selected = res.body.response_selector.default.response;
    expect(selected.intent_response_key).toBe('faq/ask_location');
    expect(selected.utter_action).toBe('utter_faq/ask_location');
    expect(selected.responses[0].text).toMatch(/Harbour Street/);
    expect(res.body.response_selector.all_retrieval_intents).toEqual(['faq']);
  });

  it('parses the bot’s ordinary intents too', async () => {
    const res = await request(t.url).post('/model/parse').send({ text: 'hello there' }).expect(200);
    expect(res.body.intent.name).toBe('greet');
  });
});
