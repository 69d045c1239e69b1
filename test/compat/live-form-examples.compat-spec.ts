import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLiveActionServer } from 'test/compat/utils/live-action-server';
import {
  CHANNELS,
  runBot,
  sender,
  startLiveBot,
  testCore,
  type RunningBot,
} from 'test/compat/utils/live-bot';
import type { TestActionServer } from 'test/utils/action-server';

/** Rasa's five form tutorials (rasa-3.x-form-examples), each with its own actions. */
describe('compat: form examples', () => {
  let actions: TestActionServer;

  beforeAll(async () => {
    actions = await startLiveActionServer();
  });

  afterAll(async () => {
    await actions?.close();
  });

  /** Trains and starts one example for the tests in its describe block. */
  function example(name: string): { bot: () => RunningBot } {
    let bot: RunningBot;
    beforeAll(async () => {
      bot = await runBot(`form-examples/${name}`, actions.url);
    }, 240_000);
    afterAll(async () => {
      await bot?.close();
    });
    return { bot: () => bot };
  }

  describe('01-actions: a custom action telling the time', () => {
    const { bot } = example('01-actions');
    it("starts with its own credentials.yml (rest and Rasa X's `rasa` channel)", async () => {
      const own = readFileSync(join(bot().files.dir, 'credentials.yml'), 'utf8');
      const live = await startLiveBot(bot().files, bot().models, null, own);
      await live.close();
    }, 60_000);
    it.each(CHANNELS)('over the $name channel', async ({ say }) => {
      const id = sender('ex01');
      expect(await say(bot(), id, 'hello')).toEqual([
        { recipient_id: id, text: 'Hey! How are you?' },
      ]);
      const time = await say(bot(), id, 'what time is it?');
      expect(time).toEqual([
        {
          recipient_id: id,
          text: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/),
        },
      ]);
      expect(await say(bot(), id, 'bye')).toEqual([{ recipient_id: id, text: 'Bye' }]);
    });
    it('passes its test stories', () => {
      const r = testCore(bot().files, bot().models);
      expect(r.stdout).toMatch(/Conversation accuracy: 1 \((\d+)\/\1 stories\)/);
    }, 120_000);
  });

  describe('02-slots: a slot from an entity, read back by a custom action', () => {
    const { bot } = example('02-slots');
    it.each(CHANNELS)('over the $name channel', async ({ say }) => {
      const id = sender('ex02');
      expect(await say(bot(), id, '/repeat_shirt_size')).toEqual([
        { recipient_id: id, text: "I don't know your shirt size." },
      ]);
      expect(await say(bot(), id, '/ask_me_anything')).toEqual([
        { recipient_id: id, text: 'What is your shirt size?' },
      ]);
      expect(await say(bot(), id, '/give_shirt_size{"shirt_size": "large"}')).toEqual([
        { recipient_id: id, text: "Thanks. I'll remember that." },
      ]);
      expect(await say(bot(), id, '/repeat_shirt_size')).toEqual([
        { recipient_id: id, text: 'Your shirt size is large!' },
      ]);
    });
  });

  describe('03-conditions: a form whose slot maps only while the form is active', () => {
    const { bot } = example('03-conditions');
    it.each(CHANNELS)('over the $name channel', async ({ say }) => {
      const id = sender('ex03');
      expect(await say(bot(), id, '/greet')).toEqual([
        { recipient_id: id, text: 'Hey! How are you?' },
      ]);
      expect(await say(bot(), id, '/ask_me_anything')).toEqual([
        { recipient_id: id, text: 'What is your shirt size?' },
      ]);
      expect(await say(bot(), id, '/give_shirt_size{"shirt_size": "large"}')).toEqual([
        { recipient_id: id, text: "Thanks. I'll remember that." },
      ]);
      // This example's only training data for repeat_shirt_size is its "interactive story 1",
      // which answers with utter_happy (it has no rule for action_say_shirt_size).
      expect(await say(bot(), id, '/repeat_shirt_size')).toEqual([
        { recipient_id: id, text: 'Great, carry on!' },
      ]);
    });
  });

  describe('04-from-text: a name form filled from the message text', () => {
    const { bot } = example('04-from-text');
    it.each(CHANNELS)('over the $name channel', async ({ say }) => {
      const id = sender('ex04');
      expect(await say(bot(), id, 'give name')).toEqual([
        { recipient_id: id, text: 'What is your first name?' },
      ]);
      expect(await say(bot(), id, 'Vincent')).toEqual([
        { recipient_id: id, text: 'So Vincent, what is your last name?' },
      ]);
      expect(await say(bot(), id, 'Vincent-McVincent')).toEqual([
        { recipient_id: id, text: 'Ok. Thanks!' },
        { recipient_id: id, text: 'I will remember that your name is Vincent Vincent-McVincent!' },
      ]);
    });
  });

  describe('05-validation: the name form with validate_name_form', () => {
    const { bot } = example('05-validation');
    it.each(CHANNELS)('over the $name channel', async ({ say }) => {
      const id = sender('ex05');
      expect(await say(bot(), id, 'give name')).toEqual([
        { recipient_id: id, text: 'What is your first name?' },
      ]);
      expect(await say(bot(), id, 'Vi')).toEqual([
        { recipient_id: id, text: "That's a very short name. I'm assuming you mis-spelled." },
        { recipient_id: id, text: 'What is your first name?' },
      ]);
      expect(await say(bot(), id, 'Vincent')).toEqual([
        { recipient_id: id, text: 'What is your last name?' },
      ]);
      expect(await say(bot(), id, 'McVincent')).toEqual([
        { recipient_id: id, text: 'Ok. Thanks!' },
        { recipient_id: id, text: 'I will remember that your name is Vincent McVincent!' },
      ]);
      const mine = actions.calls.filter((c) => c.sender_id === id);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.every((c) => c.next_action === 'validate_name_form')).toBe(true);
    });
  });
});
