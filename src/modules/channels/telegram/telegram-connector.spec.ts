import { readUpdate } from './telegram-connector';

describe('readUpdate (Rasa TelegramInput)', () => {
  const chat = { id: 42, type: 'private' };

  it('reads text (without /bot), locations, edits and callback queries', () => {
    expect(readUpdate({ message: { chat, text: '/bot hello' } })).toEqual({
      text: ' hello',
      chatId: '42',
    });
    expect(
      readUpdate({ message: { chat, location: { longitude: 13.4, latitude: 52.5 } } }),
    ).toEqual({ text: '{"lng":13.4, "lat":52.5}', chatId: '42' });
    expect(readUpdate({ edited_message: { chat, text: 'typo fixed' } })).toEqual({
      text: 'typo fixed',
      chatId: '42',
    });
    expect(readUpdate({ callback_query: { data: '/affirm', message: { chat } } })).toEqual({
      text: '/affirm',
      chatId: '42',
    });
  });

  it('handles no other update', () => {
    expect(readUpdate({ message: { chat, sticker: { file_id: 'x' } } })).toBeNull();
    expect(readUpdate({ channel_post: { chat, text: 'news' } })).toBeNull();
  });
});
