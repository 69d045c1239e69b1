import {
  CHANNELS,
  prepareBot,
  sender,
  startLiveBot,
  testCore,
  trainLiveBot,
  withDefaultPipeline,
  type LiveBot,
  type LiveBotFiles,
} from 'test/compat/utils/live-bot';

/**
 * moodbot: the greeting with buttons, the cheer-up image as its own message, and its test
 * stories. Its config's NLU pipeline is spaCy's (en_core_web_md) with DIET trained for 1 epoch;
 * trained as is, Parley swaps the spaCy components with a warning and the NLU cannot tell
 * `hello` from `bye`, so the conversation runs on Rasa's default pipeline (its policies as is).
 */
describe('compat: moodbot', () => {
  let files: LiveBotFiles;
  let models: string;
  let bot: LiveBot;

  beforeAll(async () => {
    const own = prepareBot('moodbot');
    try {
      const asIs = trainLiveBot(own);
      expect(asIs.status).toBe(0);
      expect(asIs.stderr).toContain("'SpacyNLP' is not supported");
    } finally {
      own.remove();
    }
    files = prepareBot('moodbot', withDefaultPipeline);
    const trained = trainLiveBot(files);
    if (trained.status !== 0) throw new Error(`training failed: ${trained.stderr}`);
    models = trained.models;
    bot = await startLiveBot(files, models, null);
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
    files?.remove();
  });

  describe.each(CHANNELS)('over the $name channel', ({ say }) => {
    it('holds the sad path: greeting with buttons, image, question, happy ending', async () => {
      const id = sender('mood');
      expect(await say(bot, id, 'hello')).toEqual([
        {
          recipient_id: id,
          text: 'Hey! How are you?',
          buttons: [
            { title: 'great', payload: '/mood_great' },
            { title: 'super sad', payload: '/mood_unhappy' },
          ],
        },
      ]);
      expect(await say(bot, id, 'I am sad')).toEqual([
        { recipient_id: id, text: 'Here is something to cheer you up:' },
        { recipient_id: id, image: 'https://i.imgur.com/iPa8HCj.jpeg' },
        { recipient_id: id, text: 'Did that help you?' },
      ]);
      expect(await say(bot, id, 'yes')).toEqual([{ recipient_id: id, text: 'Great, carry on!' }]);
      expect(await say(bot, id, 'are you a bot?')).toEqual([
        { recipient_id: id, text: 'I am a bot, powered by Rasa.' },
      ]);
      expect(await say(bot, id, 'bye')).toEqual([{ recipient_id: id, text: 'Bye' }]);
    });

    it('answers a button payload like the intent it names', async () => {
      const id = sender('mood-payload');
      await say(bot, id, 'hi');
      expect(await say(bot, id, '/mood_great')).toEqual([
        { recipient_id: id, text: 'Great, carry on!' },
      ]);
    });
  });

  it('passes its test stories (`parley test core`)', () => {
    const r = testCore(files, models);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Conversation accuracy: 1 (7/7 stories)');
  }, 120_000);
});
