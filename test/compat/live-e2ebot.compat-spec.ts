import { CHANNELS, runBot, sender, testCore, type RunningBot } from 'test/compat/utils/live-bot';

const SUGGESTIONS = [
  'how about greek food?',
  'how about chinese food?',
  'how about italian food?',
  'how about sushi?',
];

/**
 * e2ebot: `utter_*` actions listed under `actions:` are rendered from the domain (no action
 * server is configured), a response with four variations, and its end-to-end test stories.
 */
describe('compat: e2ebot', () => {
  let bot: RunningBot;

  beforeAll(async () => {
    bot = await runBot('e2ebot', null);
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
  });

  describe.each(CHANNELS)('over the $name channel', ({ say }) => {
    it('greets, suggests a cuisine and searches when the user agrees', async () => {
      const id = sender('e2e');
      expect(await say(bot, id, 'hi')).toEqual([{ recipient_id: id, text: 'hi!' }]);
      const suggestion = await say(bot, id, 'show me a place to eat');
      expect(suggestion).toHaveLength(1);
      expect(SUGGESTIONS).toContain(suggestion[0]!.text);
      expect(await say(bot, id, 'yes')).toEqual([
        { recipient_id: id, text: "great! here's what I found ..." },
      ]);
    });
  });

  it('passes its test stories (`parley test core`)', () => {
    const r = testCore(bot.files, bot.models);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Conversation accuracy: 1 (4/4 stories)');
  }, 120_000);
});
