import { join } from 'node:path';
import request from 'supertest';
import {
  botFiles,
  postTestStories,
  sayRest,
  startAppWithTrainedBot,
  type TrainedBotApp,
} from 'test/utils/bots';
import { ROOT } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';

/** The bundled example assistant (examples/coffee), as `npm start` trains and serves it. */
const COFFEE = botFiles(join(ROOT, 'examples', 'coffee'));

/**
 * A conversation with the example assistant over the REST channel: the greeting's buttons, the
 * special with its image, the order form asking, refusing what it cannot use and asking again,
 * and rules answering at any time.
 */
describe('the example assistant (examples/coffee) end to end', () => {
  let t: TrainedBotApp;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(COFFEE, 'parley-coffee-');
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  const say = (sender: string, message: string): Promise<Record<string, unknown>[]> =>
    sayRest(t.url, sender, message);

  it('greets with buttons, shows the special, takes an order with validation', async () => {
    const s = uniqueId('coffee');
    const ask = (text: string) => ({ recipient_id: s, text });
    const askDrink = ask('Which drink would you like: espresso, cappuccino, latte or flat white?');
    const askTime = ask('When will you pick it up? Please give a time like 08:30.');
    const refused = ask('Sorry, I cannot take that.');

    expect(await say(s, 'hello')).toEqual([
      {
        recipient_id: s,
        text: 'Welcome to the Parley coffee bar! What would you like?',
        buttons: [
          { title: 'Order a coffee', payload: '/order_coffee' },
          { title: "Today's special", payload: '/show_special' },
        ],
      },
    ]);
    // The second button's payload, as a client sends it when it is pressed.
    expect(await say(s, '/show_special')).toEqual([
      ask("Today's special is a cinnamon flat white."),
      { recipient_id: s, image: 'https://images.example.org/parley/flat-white.jpg' },
    ]);
    expect(await say(s, 'i would like to order a coffee')).toEqual([askDrink]);
    // Not on the menu: the form cannot fill `drink` and asks again.
    expect(await say(s, 'a mocha please')).toEqual([refused, askDrink]);
    expect(await say(s, 'a latte please')).toEqual([askTime]);
    // Not a time like 08:30: asked again.
    expect(await say(s, 'at noon')).toEqual([refused, askTime]);
    expect(await say(s, 'at 08:30')).toEqual([ask('Thanks! Your latte will be ready at 08:30.')]);
    expect(await say(s, 'thanks')).toEqual([ask('You are welcome!')]);

    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    expect(tracker.body.slots).toMatchObject({
      drink: 'latte',
      pickup_time: '08:30',
      requested_slot: null,
    });
    expect(tracker.body.active_loop).toEqual({});
  });

  it('answers "are you a bot?" by rule, also in the middle of an order', async () => {
    const s = uniqueId('coffee');
    const bot = [{ recipient_id: s, text: 'I am a bot, built with Parley.' }];
    expect(await say(s, 'are you a bot?')).toEqual(bot);
    await say(s, '/order_coffee');
    const interrupted = await say(s, 'are you a bot?');
    expect(interrupted[0]).toEqual(bot[0]);
    expect(await say(s, 'bye')).toContainEqual({
      recipient_id: s,
      text: 'Goodbye, enjoy your coffee!',
    });
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    expect(tracker.body.latest_message.intent.name).toBe('goodbye');
  });

  it('passes its test stories (examples/coffee/tests) over HTTP', async () => {
    const stories = join(ROOT, 'examples', 'coffee', 'tests', 'test_stories.yml');
    const res = await postTestStories(t.url, stories);
    expect(res.body.report.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 2,
      with_warnings: 0,
      total: 2,
    });
  });
});
