import { startLiveActionServer } from 'test/compat/utils/live-action-server';
import {
  CHANNELS,
  prepareBot,
  runBot,
  sender,
  trainLiveBot,
  type RunningBot,
} from 'test/compat/utils/live-bot';
import type { TestActionServer } from 'test/utils/action-server';

/** The rules bot's RulePolicy with `restrict_rules: false`. */
const unrestricted = (c: string) =>
  c.replace(/(- name: RulePolicy\n)/, '$1    restrict_rules: false\n');

/**
 * rules (a RulePolicy-only bot). As published it does not train, and Rasa refuses it the same
 * way: two of its rules have two user turns (restrict_rules), and with that lifted its
 * TwoStageFallback rule runs `two_stage_fallback`, which the domain does not have
 * (ActionNotFoundException). The conversation runs on a copy without that rule. Its NLU data is
 * the formbot's, without most intents the rules use, so the turns are intent payloads.
 */
describe('compat: rules', () => {
  it('refuses to train: rules with more than one user message', () => {
    const files = prepareBot('rules');
    try {
      const r = trainLiveBot(files);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('Found rules with more than one user message');
      expect(r.stderr).toContain("rule 'Detailed FAQ did not help - continue'");
    } finally {
      files.remove();
    }
  }, 120_000);

  it('refuses to train without restrict_rules: two_stage_fallback is not in the domain', () => {
    const files = prepareBot('rules', unrestricted);
    try {
      const r = trainLiveBot(files);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('not a registered action for this domain');
      expect(r.stderr).toContain(
        "'two_stage_fallback' in rule 'Implementation of the TwoStageFallbackPolicy'",
      );
    } finally {
      files.remove();
    }
  }, 120_000);

  describe('without its TwoStageFallback rule', () => {
    let actions: TestActionServer;
    let bot: RunningBot;

    beforeAll(async () => {
      actions = await startLiveActionServer();
      bot = await runBot('rules', actions.url, {
        edit: unrestricted,
        dropRule: 'Implementation of the TwoStageFallbackPolicy',
      });
    }, 240_000);

    afterAll(async () => {
      await bot?.close();
      await actions?.close();
    });

    describe.each(CHANNELS)('over the $name channel', ({ say }) => {
      it('greets at the start, fills the form with an explanation detour, submits', async () => {
        const id = sender('rules-form');
        const t = (text: string) => ({ recipient_id: id, text });
        expect(await say(bot, id, '/greet')).toEqual([t('utter_greet')]);
        expect(await say(bot, id, '/activate_q_form')).toEqual([t('utter_ask_some_slot')]);
        expect(await say(bot, id, '/explain')).toEqual([
          t('utter_explain_some_slot'),
          t('utter_ask_some_slot'),
        ]);
        expect(await say(bot, id, '/inform{"some_slot": "x"}')).toEqual([t('utter_stop')]);
        // No rule matches: the core fallback (action_default_fallback) sends utter_default.
        expect(await say(bot, id, '/deny')).toEqual([t('I give up.')]);
      });

      it('switches to detailed FAQs and walks the two-turn FAQ rules', async () => {
        const id = sender('rules-faq');
        const t = (text: string) => ({ recipient_id: id, text });
        expect(await say(bot, id, '/switch_faq')).toEqual([]);
        expect(await say(bot, id, '/faq')).toEqual([t('utter_faq'), t('utter_ask_did_help')]);
        expect(await say(bot, id, '/deny')).toEqual([
          t('utter_detailed_faq'),
          t('utter_ask_did_help'),
        ]);
        expect(await say(bot, id, '/deny')).toEqual([t('utter_ask_stop')]);
        expect(await say(bot, id, '/affirm')).toEqual([t('utter_stop')]);
        const mine = actions.calls.filter((c) => c.sender_id === id);
        expect(mine.map((c) => c.next_action)).toEqual(['action_switch_faq']);
      });
    });
  });
});
