import { startLiveActionServer } from 'test/compat/utils/live-action-server';
import { CHANNELS, runBot, sender, type RunningBot } from 'test/compat/utils/live-bot';
import type { TestActionServer } from 'test/utils/action-server';

/**
 * concertbot (Rasa's default pipeline and policies): custom actions that set list and bool
 * slots, and a story that reads the list slot back (`compare reviews`).
 */
describe('compat: concertbot', () => {
  let actions: TestActionServer;
  let bot: RunningBot;

  beforeAll(async () => {
    actions = await startLiveActionServer();
    bot = await runBot('concertbot', actions.url);
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
    await actions?.close();
  });

  describe.each(CHANNELS)('over the $name channel', ({ say }) => {
    it('gets started, likes music, finds concerts and compares their reviews', async () => {
      const id = sender('concert');
      expect(await say(bot, id, 'hello')).toEqual([{ recipient_id: id, text: 'Hey there!' }]);
      expect(await say(bot, id, 'how do I get started')).toEqual([
        {
          recipient_id: id,
          text: 'I can help you find concerts and venues. Do you like music?',
        },
      ]);
      expect(await say(bot, id, 'yes')).toEqual([
        {
          recipient_id: id,
          text: 'Awesome! You can ask me things like "Find me some concerts" or "What\'s a good venue"',
        },
      ]);
      expect(await say(bot, id, 'Find me some good concerts')).toEqual([
        { recipient_id: id, text: 'Foo Fighters, Katy Perry' },
      ]);
      expect(await say(bot, id, 'compare reviews')).toEqual([
        {
          recipient_id: id,
          text: "concerts from highest to lowest: [{'artist': 'Foo Fighters', 'reviews': 4.5}, {'artist': 'Katy Perry', 'reviews': 4.9}]",
        },
      ]);
      expect(await say(bot, id, 'bye')).toEqual([{ recipient_id: id, text: 'Goodbye :(' }]);
      const mine = actions.calls.filter((c) => c.sender_id === id);
      expect(mine.map((c) => c.next_action)).toEqual([
        'action_set_music_preference',
        'action_search_concerts',
        'action_show_concert_reviews',
      ]);
      expect(mine[2]!.tracker.slots).toMatchObject({ likes_music: true });
    });

    it('lists venues in two messages', async () => {
      const id = sender('venues');
      expect(await say(bot, id, 'search venues')).toEqual([
        { recipient_id: id, text: 'here are some venues I found' },
        { recipient_id: id, text: 'Big Arena, Rock Cellar' },
      ]);
    });
  });
});
