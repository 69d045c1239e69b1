import { eventText } from './facebook-connector';

describe('eventText (Rasa Messenger)', () => {
  it('reads quick replies before text, attachments by URL and postbacks', () => {
    expect(eventText({ message: { text: 'good', quick_reply: { payload: '/mood_great' } } })).toBe(
      '/mood_great',
    );
    expect(eventText({ message: { text: 'hi' } })).toBe('hi');
    expect(
      eventText({
        message: { attachments: [{ type: 'image', payload: { url: 'https://x.example/i.png' } }] },
      }),
    ).toBe('https://x.example/i.png');
    expect(eventText({ postback: { title: 'Go', payload: '/go' } })).toBe('/go');
  });

  it('handles no echo, location attachment or delivery event', () => {
    expect(eventText({ message: { text: 'hi', is_echo: true } })).toBeNull();
    expect(eventText({ message: { attachments: [{ type: 'location', payload: {} }] } })).toBeNull();
    expect(eventText({ delivery: { mids: ['m'] } })).toBeNull();
  });
});
