import { CollectingOutputChannel } from 'src/core/channels/output-channel';

describe('CollectingOutputChannel.sendResponse', () => {
  it('splits text on blank lines and puts buttons on the last part', async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u1', {
      text: 'Hey!\n\nHow are you?',
      buttons: [{ title: 'great', payload: '/mood_great' }],
    });
    expect(out.messages).toEqual([
      { recipient_id: 'u1', text: 'Hey!' },
      {
        recipient_id: 'u1',
        text: 'How are you?',
        buttons: [{ title: 'great', payload: '/mood_great' }],
      },
    ]);
  });

  it('sends image, attachment, elements and custom as separate messages, dropping nulls', async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u2', {
      text: 'Here is something to cheer you up:',
      image: 'https://i.imgur.com/nGF1K8f.jpg',
      custom: { kind: 'x' },
      attachment: null,
    });
    expect(out.messages).toEqual([
      { recipient_id: 'u2', text: 'Here is something to cheer you up:' },
      { recipient_id: 'u2', custom: { kind: 'x' } },
      { recipient_id: 'u2', image: 'https://i.imgur.com/nGF1K8f.jpg' },
    ]);
  });

  it('prefers quick replies over buttons', async () => {
    const out = new CollectingOutputChannel();
    await out.sendResponse('u3', { text: 'Pick', quick_replies: [1], buttons: [2] });
    expect(out.messages).toEqual([{ recipient_id: 'u3', text: 'Pick', quick_replies: [1] }]);
  });
});
