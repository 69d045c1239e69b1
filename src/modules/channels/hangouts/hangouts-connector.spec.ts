import { readEvent } from './hangouts-connector';
import { HangoutsOutputChannel } from './hangouts.output-channel';

const intents = {
  userAddedIntent: '/user_added',
  roomAddedIntent: '/room_added',
  removedIntent: '/bot_removed',
};
const dm = { type: 'DM', displayName: '' };
const room = { type: 'ROOM', displayName: 'Team' };
const user = { displayName: 'Ann' };

describe('readEvent (Rasa HangoutsInput)', () => {
  it('reads messages, card clicks and added/removed events', () => {
    expect(
      readEvent(
        {
          type: 'MESSAGE',
          space: dm,
          user,
          message: { text: 'hi', sender: { displayName: 'Bo' } },
        },
        intents,
      ),
    ).toEqual({ text: 'hi', sender: 'Bo', room: null });
    expect(
      readEvent(
        { type: 'CARD_CLICKED', space: room, user, action: { actionMethodName: '/a' } },
        intents,
      ),
    ).toEqual({ text: '/a', sender: 'Ann', room: 'Team' });
    expect(readEvent({ type: 'ADDED_TO_SPACE', space: dm, user }, intents)?.text).toBe(
      '/user_added',
    );
    expect(readEvent({ type: 'ADDED_TO_SPACE', space: room, user }, intents)?.text).toBe(
      '/room_added',
    );
    expect(readEvent({ type: 'REMOVED_FROM_SPACE', space: dm, user }, intents)?.text).toBe(
      '/bot_removed',
    );
  });

  it('runs no turn for other events or an intent name set empty', () => {
    expect(readEvent({ type: 'WIDGET_UPDATED', space: dm, user }, intents)).toBeNull();
    expect(
      readEvent({ type: 'ADDED_TO_SPACE', space: dm, user }, { ...intents, userAddedIntent: '' }),
    ).toBeNull();
  });
});

describe('HangoutsOutputChannel (Rasa HangoutsOutput._persist_message)', () => {
  const card = { sections: [{ widgets: [{ image: { imageUrl: 'u' } }] }] };

  it('joins texts with a space and turns texts into cards once a card is sent', async () => {
    const out = new HangoutsOutputChannel();
    await out.sendResponse('s', { text: 'a' });
    await out.sendResponse('s', { text: 'b' });
    expect(out.message).toEqual({ text: 'a b' });
    await out.sendResponse('s', { image: 'u' });
    expect(out.message).toEqual({
      cards: [{ sections: [{ widgets: [{ textParagraph: { text: 'a b' } }] }] }, card],
    });
    await out.sendResponse('s', { custom: { cards: [card] } });
    expect((out.message.cards as unknown[]).length).toBe(3);
  });

  it('leaves out custom JSON with neither text nor cards and buttons without title or payload', async () => {
    const out = new HangoutsOutputChannel();
    await out.sendResponse('s', { custom: { sections: [] } });
    await out.sendResponse('s', { text: 't', buttons: [{ title: 'x' }] });
    expect(out.message).toEqual({});
  });
});
