import { startLiveActionServer } from 'test/compat/utils/live-action-server';
import {
  CHANNELS,
  MAX_EPOCHS,
  runBot,
  sender,
  testCore,
  type RunningBot,
} from 'test/compat/utils/live-bot';
import type { TestActionServer } from 'test/utils/action-server';

/**
 * formbot: the restaurant form with `validate_restaurant_form` (a cuisine outside the
 * example's list is refused with utter_wrong_cuisine and asked again), conditional from_intent
 * and from_text mappings, and the submit rule. Its config trains DIET for 1 epoch, too little
 * to understand free text: the suite trains DIET for MAX_EPOCHS. Its DucklingEntityExtractor
 * asks `localhost:8000`, where no Duckling server runs here: Parley's built-in extractor answers
 * for it (with a warning), so "2 people" fills the number of people offline.
 */
describe('compat: formbot', () => {
  let actions: TestActionServer;
  let bot: RunningBot;

  beforeAll(async () => {
    actions = await startLiveActionServer();
    bot = await runBot('formbot', actions.url, {
      edit: (c) => c.replace(/(name: DIETClassifier\s+epochs:) 1\b/, `$1 ${MAX_EPOCHS}`),
    });
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
    await actions?.close();
  });

  describe.each(CHANNELS)('over the $name channel', ({ say }) => {
    it('fills the restaurant form with validation and submits it', async () => {
      const id = sender('form');
      const t = (text: string) => [{ recipient_id: id, text }];
      expect(await say(bot, id, 'hi')).toEqual(
        t('Hello! I am restaurant search assistant! How can I help?'),
      );
      expect(await say(bot, id, 'im looking for a restaurant')).toEqual(t('What cuisine?'));
      expect(await say(bot, id, 'afghan food')).toEqual([
        { recipient_id: id, text: 'Cuisine type is not in the database, please try again' },
        { recipient_id: id, text: 'What cuisine?' },
      ]);
      expect(await say(bot, id, 'italian food')).toEqual(t('How many people?'));
      // The number comes from the built-in Duckling extractor: no Duckling server runs here.
      expect(await say(bot, id, '2 people')).toEqual(t('Do you want to sit outside?'));
      expect(await say(bot, id, 'yes')).toEqual(t('Please provide additional preferences'));
      expect(await say(bot, id, 'no')).toEqual(
        t('Please give your feedback on your experience so far'),
      );
      expect(await say(bot, id, '/inform{"feedback": "great"}')).toEqual([
        { recipient_id: id, text: 'All done!' },
        {
          recipient_id: id,
          text:
            'I am going to run a restaurant search using the following parameters:\n' +
            ' - cuisine: italian\n - num_people: 2\n - outdoor_seating: True\n' +
            ' - preferences: no additional preferences\n - feedback: great',
        },
      ]);
      // 'thank you', not 'thanks': with DIET capped at 20 epochs the one-word 'thanks' is read as
      // deny (0.32 vs 0.29), an NLU-quality matter this suite does not test.
      expect(await say(bot, id, 'thank you')).toEqual(t('You are welcome :)'));
      expect(actions.calls.filter((c) => c.sender_id === id).length).toBeGreaterThan(0);
      expect(
        actions.calls
          .filter((c) => c.sender_id === id)
          .every((c) => c.next_action === 'validate_restaurant_form'),
      ).toBe(true);
    });
  });

  it('runs its test stories: all three fail at utter_submit (a known data mismatch)', () => {
    // The bot's tests/test_stories.yml expect `utter_slots_values` right after the form ends,
    // but its "submit form" rule runs `utter_submit` first: Rasa's `rasa test` fails all three
    // stories the same way (0/3), predicting utter_submit there.
    const r = testCore(bot.files, bot.models);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Conversation accuracy: 0 (0/3 stories)');
    expect(
      r.failedStories.match(/- action: utter_slots_values {2}# predicted: utter_submit/g),
    ).toHaveLength(3);
  }, 120_000);
});
