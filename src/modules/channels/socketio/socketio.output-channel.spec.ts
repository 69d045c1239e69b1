import { SocketIoOutputChannel } from './socketio.output-channel';

/** Rasa's SocketIOOutput, through `send_response`. */
describe('SocketIoOutputChannel', () => {
  const channel = () => {
    const emitted: Array<[string, string, unknown]> = [];
    const emitter = {
      to: (room: string) => ({
        emit: (event: string, payload: unknown) => emitted.push([room, event, payload]) > 0,
      }),
    };
    return { out: new SocketIoOutputChannel(emitter, 'bot_uttered'), emitted };
  };

  it('emits what rasa-webchat renders, to the recipient room', async () => {
    const { out, emitted } = channel();
    await out.sendResponse('s1', {
      text: 'Hey!\n\nHow are you?',
      buttons: [{ title: 'great', payload: '/mood_great' }],
    });
    await out.sendResponse('s1', { text: 'Here:', image: 'https://example.org/a.jpg' });
    expect(emitted).toEqual([
      ['s1', 'bot_uttered', { text: 'Hey!', quick_replies: [] }],
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

  it('sends elements as generic templates, attachments and custom payloads as given', async () => {
    const { out, emitted } = channel();
    await out.sendResponse('r', { elements: [{ title: 'a' }, { title: 'b' }] });
    await out.sendResponse('r', { attachment: { type: 'video', payload: { src: 'v' } } });
    await out.sendResponse('r', { custom: { kind: 'map' } });
    await out.sendResponse('r', { custom: { data: { x: 1 }, room: 'other' } });
    const generic = (e: unknown) => ({
      attachment: { type: 'template', payload: { template_type: 'generic', elements: e } },
    });
    expect(emitted.map(([room, , payload]) => [room, payload])).toEqual([
      ['r', generic({ title: 'a' })],
      ['r', generic({ title: 'b' })],
      ['r', { attachment: { type: 'video', payload: { src: 'v' } } }],
      ['r', { kind: 'map' }],
      ['other', { x: 1 }],
    ]);
  });

  it('treats the empty lists and objects of a rasa-sdk message as absent', async () => {
    const { out, emitted } = channel();
    await out.sendResponse('r', {
      text: 'Done.',
      buttons: [],
      elements: [],
      custom: {},
      image: null,
      attachment: null,
    });
    expect(emitted).toEqual([['r', 'bot_uttered', { text: 'Done.' }]]);
  });
});
