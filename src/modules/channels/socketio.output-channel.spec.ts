import { socketIoMessages, SocketIoOutputChannel } from './socketio.output-channel';

describe('SocketIoOutputChannel', () => {
  it('emits what rasa-webchat renders, to the recipient room', async () => {
    const emitted: Array<[string, string, unknown]> = [];
    const emitter = {
      to: (room: string) => ({
        emit: (event: string, payload: unknown) => emitted.push([room, event, payload]) > 0,
      }),
    };
    const out = new SocketIoOutputChannel(emitter, 'bot_uttered');
    await out.sendResponse('s1', {
      text: 'Hey!\n\nHow are you?',
      buttons: [{ title: 'great', payload: '/mood_great' }],
    });
    await out.sendResponse('s1', { text: 'Here:', image: 'https://example.org/a.jpg' });
    expect(emitted).toEqual([
      ['s1', 'bot_uttered', { text: 'Hey!' }],
      [
        's1',
        'bot_uttered',
        {
          text: 'How are you?',
          quick_replies: [{ content_type: 'text', title: 'great', payload: '/mood_great' }],
        },
      ],
      ['s1', 'bot_uttered', { text: 'Here:' }],
      [
        's1',
        'bot_uttered',
        { attachment: { type: 'image', payload: { src: 'https://example.org/a.jpg' } } },
      ],
    ]);
  });

  it('sends elements as generic templates, attachments and custom payloads as given', () => {
    expect(socketIoMessages('r', { elements: [{ title: 'a' }, { title: 'b' }] })).toEqual([
      [
        'r',
        {
          attachment: {
            type: 'template',
            payload: { template_type: 'generic', elements: { title: 'a' } },
          },
        },
      ],
      [
        'r',
        {
          attachment: {
            type: 'template',
            payload: { template_type: 'generic', elements: { title: 'b' } },
          },
        },
      ],
    ]);
    expect(socketIoMessages('r', { attachment: { type: 'video', payload: { src: 'v' } } })).toEqual(
      [['r', { attachment: { type: 'video', payload: { src: 'v' } } }]],
    );
    expect(socketIoMessages('r', { custom: { kind: 'map' } })).toEqual([['r', { kind: 'map' }]]);
    expect(socketIoMessages('r', { custom: { data: { x: 1 }, room: 'other' } })).toEqual([
      ['other', { x: 1 }],
    ]);
  });
});
