import { startLiveActionServer } from 'test/compat/utils/live-action-server';
import { CHANNELS, runBot, sender, type RunningBot } from 'test/compat/utils/live-bot';
import type { TestActionServer } from 'test/utils/action-server';

/**
 * knowledgebasebot: `action_query_knowledge_base` (rasa-sdk's ActionQueryKnowledgeBase) lists
 * the objects of the type the user asked for, one message per object; the `utter_*` names its
 * domain lists under `actions:` are rendered from the domain's responses.
 */
describe('compat: knowledgebasebot', () => {
  let actions: TestActionServer;
  let bot: RunningBot;

  beforeAll(async () => {
    actions = await startLiveActionServer();
    bot = await runBot('knowledgebasebot', actions.url);
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
    await actions?.close();
  });

  describe.each(CHANNELS)('over the $name channel', ({ say }) => {
    it('greets, lists restaurants and hotels from the knowledge base, says goodbye', async () => {
      const id = sender('kb');
      const greeting = await say(bot, id, 'hello');
      expect(greeting).toHaveLength(1);
      expect(['Hey!', 'Hello! How can I help you?']).toContain(greeting[0]!.text);
      expect(greeting[0]).toEqual({ recipient_id: id, text: greeting[0]!.text });

      expect(await say(bot, id, 'what restaurants can you recommend?')).toEqual([
        { recipient_id: id, text: "Found the following objects of type 'restaurant':" },
        { recipient_id: id, text: '1: Donath' },
        { recipient_id: id, text: '2: Berlin Burrito Company' },
        { recipient_id: id, text: '3: I due forni' },
        { recipient_id: id, text: '4: Pfefferberg' },
      ]);
      expect(await say(bot, id, 'show me some hotels')).toEqual([
        { recipient_id: id, text: "Found the following objects of type 'hotel':" },
        { recipient_id: id, text: '1: Hilton' },
        { recipient_id: id, text: '2: B&B' },
        { recipient_id: id, text: '3: Berlin Wall Hostel' },
      ]);
      expect(await say(bot, id, 'are you a bot?')).toEqual([
        { recipient_id: id, text: 'I am a bot, powered by Rasa.' },
      ]);
      const bye = await say(bot, id, 'bye');
      expect(bye).toHaveLength(1);
      expect(['Bye', 'Goodbye. See you soon.']).toContain(bye[0]!.text);

      // Only the custom action went to the action server, never an utter_* name.
      const mine = actions.calls.filter((c) => c.sender_id === id);
      expect(mine.map((c) => c.next_action)).toEqual([
        'action_query_knowledge_base',
        'action_query_knowledge_base',
      ]);
    });
  });
});
