import { conciseButtons, removeEmojis } from 'src/modules/channels/connector/voice-text';
import { activityTurn } from './audiocodes-connector';
import { AudiocodesOutputChannel } from './audiocodes.output-channel';

describe('AudiocodesOutputChannel', () => {
  const at = new Date('2026-11-28T12:00:00.123Z');

  it('maps bot messages to Bot API activities as Rasa Pro does', async () => {
    const out = new AudiocodesOutputChannel(() => at);
    await out.sendResponse('c1', { text: 'Hello 👋🏽 there' });
    await out.sendResponse('c1', {
      text: 'Pick one',
      buttons: [
        { title: 'yes', payload: '/affirm' },
        { title: 'no', payload: '/deny' },
      ],
    });
    await out.sendResponse('c1', { text: 'Look:', image: 'https://x.example/i.png' });
    await out.sendResponse('c1', {
      custom: { type: 'event', name: 'transfer', activityParams: { transferTarget: 'tel:+1555' } },
    });
    await out.sendResponse('c1', { custom: { hangup: true } });
    expect(
      out.activities.map(({ id, ...rest }) => (expect(id).toMatch(/^[0-9a-f-]{36}$/), rest)),
    ).toEqual([
      { type: 'message', text: 'Hello  there', timestamp: '2026-11-28T12:00:00.123Z' },
      { type: 'message', text: 'Pick one. yes, no', timestamp: '2026-11-28T12:00:00.123Z' },
      { type: 'message', text: 'Look:', timestamp: '2026-11-28T12:00:00.123Z' },
      {
        type: 'event',
        name: 'transfer',
        activityParams: { transferTarget: 'tel:+1555' },
        timestamp: '2026-11-28T12:00:00.123Z',
      },
      { type: 'event', name: 'hangup', timestamp: '2026-11-28T12:00:00.123Z' },
    ]);
  });

  it('says buttons concisely, keeping a final punctuation mark', () => {
    expect(conciseButtons('How are you?', [{ title: 'good' }, { title: 'bad' }])).toBe(
      'How are you? good, bad',
    );
    expect(conciseButtons('Choose', [{ title: 'a' }])).toBe('Choose. a');
    expect(conciseButtons(null, [{ title: 'a' }, { title: 'b' }])).toBe('a, b');
    expect(removeEmojis('ok ✅ 🇫🇷 done')).toBe('ok   done');
  });

  it('reads activities: messages, start, DTMF and other events', () => {
    expect(activityTurn({ type: 'message', text: 'hi', parameters: { a: 1 } })).toEqual({
      text: 'hi',
      metadata: { a: 1 },
    });
    expect(activityTurn({ type: 'message', text: '' })).toBeNull();
    expect(activityTurn({ type: 'event', name: 'DTMF', value: '5' })).toEqual({
      text: '/vaig_event_DTMF',
      metadata: { value: '5' },
    });
    expect(
      activityTurn({ type: 'event', name: 'noUserInput', parameters: { n: 2 }, value: 'x' }),
    ).toEqual({ text: '/vaig_event_noUserInput', metadata: { n: 2, value: 'x' } });
    expect(activityTurn({ type: 'event' })).toBeNull();
    expect(activityTurn({ type: 'typing' })).toBeNull();
    expect(activityTurn({ type: 'event', name: 'start' })?.text).toBe('/session_start');
  });
});
