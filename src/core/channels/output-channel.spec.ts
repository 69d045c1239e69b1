import { CollectingOutputChannel, OutputChannel } from 'src/core/channels/output-channel';
import { type JsonObject } from 'src/core/events/event-base';

/** Rasa's `OutputChannel.send_response` into a `CollectingOutputChannel`. */
describe('CollectingOutputChannel.sendResponse', () => {
  it('splits text alone on blank lines; text with buttons is one message', async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u1', { text: 'Hey!\n\nHow are you?' });
    await out.sendResponse('u1', {
      text: 'Hey!\n\nHow are you?',
      buttons: [{ title: 'great', payload: '/mood_great' }],
    });
    expect(out.messages).toEqual([
      { recipient_id: 'u1', text: 'Hey!' },
      { recipient_id: 'u1', text: 'How are you?' },
      {
        recipient_id: 'u1',
        text: 'Hey!\n\nHow are you?',
        buttons: [{ title: 'great', payload: '/mood_great' }],
      },
    ]);
  });

  it('sends custom, image, attachment and elements as separate messages, dropping nulls', async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u2', {
      text: 'Here is something to cheer you up:',
      image: 'https://i.imgur.com/nGF1K8f.jpg',
      custom: { kind: 'x' },
      attachment: { type: 'file' },
      elements: [{ title: 'T', subtitle: 'S', buttons: [{ title: 'b', payload: '/b' }] }],
    });
    expect(out.messages).toEqual([
      { recipient_id: 'u2', text: 'Here is something to cheer you up:' },
      { recipient_id: 'u2', custom: { kind: 'x' } },
      { recipient_id: 'u2', image: 'https://i.imgur.com/nGF1K8f.jpg' },
      { recipient_id: 'u2', attachment: { type: 'file' } },
      { recipient_id: 'u2', text: 'T : S', buttons: [{ title: 'b', payload: '/b' }] },
    ]);
  });

  it('prefers quick replies over buttons and sends them as buttons', async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u3', { text: 'Pick', quick_replies: [1], buttons: [2] });
    expect(out.messages).toEqual([{ recipient_id: 'u3', text: 'Pick', buttons: [1] }]);
  });

  it("treats rasa-sdk's empty buttons, elements and custom as absent (one message)", async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u4', {
      text: 'Reminder set.',
      buttons: [],
      elements: [],
      custom: {},
      image: null,
      attachment: null,
      quick_replies: [],
    });
    expect(out.messages).toEqual([{ recipient_id: 'u4', text: 'Reminder set.' }]);
  });
});

/** A channel that implements only `send` gets each part of a message once. */
describe('OutputChannel.sendResponse into send', () => {
  class Recording extends OutputChannel {
    readonly name = 'recording';
    readonly sent: JsonObject[] = [];
    send(_recipientId: string, message: JsonObject): Promise<void> {
      this.sent.push(message);
      return Promise.resolve();
    }
  }

  it('hands over text with buttons, custom, image, attachment and elements in send_response order', async () => {
    const out = new Recording();
    await out.sendResponse('u', {
      text: 'Pick\n\none',
      buttons: [{ title: 'Yes', payload: '/affirm' }],
      image: 'https://x/y.png',
      attachment: null,
      elements: [{ title: 'A' }],
      custom: { kind: 'card' },
    });
    expect(out.sent).toEqual([
      { text: 'Pick\n\none', buttons: [{ title: 'Yes', payload: '/affirm' }] },
      { custom: { kind: 'card' } },
      { image: 'https://x/y.png' },
      { elements: [{ title: 'A' }] },
    ]);
  });

  it('leaves out the empty parts of a rasa-sdk message', async () => {
    const out = new Recording();
    await out.sendResponse('u', { text: 'Hi', buttons: [], elements: [], custom: {}, image: null });
    expect(out.sent).toEqual([{ text: 'Hi' }]);
  });
});
