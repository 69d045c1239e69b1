import { CHANNELS, runBot, sender, testCore, type RunningBot } from 'test/compat/utils/live-bot';

const ASK_NAME = [
  [{ text: 'hello, my name is retrieval bot.' }, { image: 'https://i.imgur.com/zTvA58i.jpeg' }],
  [{ text: 'Oh yeah, I am called the retrieval bot.' }],
];

/**
 * responseselectorbot: the retrieval intent `chitchat` answered by `utter_chitchat` (added for
 * the retrieval intent, as in Rasa) with one of the `utter_chitchat/ask_name` variations (a
 * text and an image are two messages); its domain's obsolete `respond_chitchat` action is
 * never run.
 */
describe('compat: responseselectorbot', () => {
  let bot: RunningBot;

  beforeAll(async () => {
    bot = await runBot('responseselectorbot', null);
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
  });

  describe.each(CHANNELS)('over the $name channel', ({ say }) => {
    it('answers chitchat from the response selector between mood turns', async () => {
      const id = sender('rs');
      const greeting = await say(bot, id, 'hello there');
      expect(greeting).toEqual([
        {
          recipient_id: id,
          text: 'Hey! How are you?',
          buttons: [
            { title: 'great', payload: '/mood_great' },
            { title: 'super sad', payload: '/mood_unhappy' },
          ],
        },
      ]);
      const name = await say(bot, id, 'What is your name?');
      expect(ASK_NAME.map((v) => v.map((m) => ({ recipient_id: id, ...m })))).toContainEqual(name);
      expect(await say(bot, id, 'are you a bot?')).toEqual([
        { recipient_id: id, text: 'I am a bot, powered by Rasa.' },
      ]);
      expect(await say(bot, id, 'bye')).toEqual([{ recipient_id: id, text: 'Bye' }]);
    });
  });

  it('passes its test stories, with the full retrieval intent', () => {
    const r = testCore(bot.files, bot.models, `${bot.files.dir}/stories/test_stories.yml`);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Conversation accuracy: 1 (2/2 stories)');
  }, 120_000);
});
