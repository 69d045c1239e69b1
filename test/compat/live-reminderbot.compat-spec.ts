import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REMINDER_SECONDS, startLiveActionServer } from 'test/compat/utils/live-action-server';
import {
  runBot,
  sayCallback,
  sayRest,
  sender,
  startLiveBot,
  waitForCallback,
  type RunningBot,
} from 'test/compat/utils/live-bot';
import type { TestActionServer } from 'test/utils/action-server';

/** How long the suite waits at most for a reminder to be delivered (bounded, not asserted). */
const DELIVERY_BOUND_MS = (REMINDER_SECONDS + 8) * 1000;

/**
 * reminderbot: `action_set_reminder` schedules a `reminder` event; when it fires, the
 * `EXTERNAL_reminder` intent runs `action_react_to_reminder`, whose message goes to the channel
 * the reminder was set on (the callback channel POSTs it). Its credentials list Rasa channels
 * (`rasa:`) next to rest and callback, as the bot's own credentials.yml does.
 */
describe('compat: reminderbot', () => {
  let actions: TestActionServer;
  let bot: RunningBot;

  beforeAll(async () => {
    actions = await startLiveActionServer();
    bot = await runBot('reminderbot', actions.url);
  }, 240_000);

  afterAll(async () => {
    await bot?.close();
    await actions?.close();
  });

  it('starts with its own channels: credentials.yml lists `rasa:` next to `callback:`', async () => {
    const own = readFileSync(join(bot.files.dir, 'credentials.yml'), 'utf8').replace(
      /callback:\n {2}url: .*\n/,
      '',
    );
    const live = await startLiveBot(bot.files, bot.models, actions.url, own);
    await live.close();
  }, 60_000);

  it('sets a reminder over the callback channel and delivers it there when it fires', async () => {
    const id = sender('remind');
    expect(await sayCallback(bot, id, 'hello')).toEqual([
      { recipient_id: id, text: 'What can I do for you?' },
    ]);
    // The example's SpacyEntityExtractor (PERSON) runs Parley's rule-based substitute; the
    // entity is given in the message, as a button payload would, to depend on neither.
    expect(await sayCallback(bot, id, '/ask_remind_call{"PERSON": "John"}')).toEqual([
      { recipient_id: id, text: `I will remind you in ${REMINDER_SECONDS} seconds.` },
    ]);
    const after = bot.receiver.received.length;
    expect(await waitForCallback(bot, id, after, DELIVERY_BOUND_MS)).toEqual([
      { recipient_id: id, text: 'Remember to call John!' },
    ]);
    const reacted = actions.calls.find(
      (c) => c.sender_id === id && c.next_action === 'action_react_to_reminder',
    );
    expect(reacted?.tracker.latest_message).toMatchObject({
      intent: { name: 'EXTERNAL_reminder' },
    });
  }, 30_000);

  it('fires a reminder set as the first message of a conversation', async () => {
    const id = sender('remind-first');
    expect(await sayCallback(bot, id, '/ask_remind_call{"PERSON": "Susan"}')).toEqual([
      { recipient_id: id, text: `I will remind you in ${REMINDER_SECONDS} seconds.` },
    ]);
    const after = bot.receiver.received.length;
    expect(await waitForCallback(bot, id, after, DELIVERY_BOUND_MS)).toEqual([
      { recipient_id: id, text: 'Remember to call Susan!' },
    ]);
  }, 30_000);

  it('cancels its reminders when asked to forget them', async () => {
    const id = sender('forget');
    await sayCallback(bot, id, '/ask_remind_call{"PERSON": "Alan"}');
    expect(await sayCallback(bot, id, 'Forget about the reminder')).toEqual([
      { recipient_id: id, text: "Okay, I'll cancel all your reminders." },
    ]);
    const after = bot.receiver.received.length;
    // Wait past the reminder's time (bounded) and check nothing was delivered.
    expect(await waitForCallback(bot, id, after, (REMINDER_SECONDS + 2) * 1000)).toEqual([]);
    expect(
      actions.calls.some((c) => c.sender_id === id && c.next_action === 'action_react_to_reminder'),
    ).toBe(false);
  }, 30_000);

  it('tells the conversation id over the REST channel, one message per utter_message', async () => {
    const id = sender('ask-id');
    const messages = await sayRest(bot, id, 'What is the ID of this conversation?');
    expect(messages).toHaveLength(2);
    expect(messages[0]).toEqual({
      recipient_id: id,
      text: `The ID of this conversation is '${id}'.`,
    });
    expect(messages[1]).toEqual({ recipient_id: id, text: expect.stringContaining(id) });
    expect(await sayRest(bot, id, 'bye')).toEqual([{ recipient_id: id, text: 'Bye' }]);
  });
});
