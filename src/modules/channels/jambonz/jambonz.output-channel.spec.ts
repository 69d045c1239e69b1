import { gatherResult } from './jambonz-connector';
import { JambonzOutputChannel } from './jambonz.output-channel';

describe('JambonzOutputChannel', () => {
  const strip = (verbs: Record<string, unknown>[]) => verbs.map(({ id: _id, ...rest }) => rest);

  it('says texts, buttons concisely and custom text, then gathers', async () => {
    const out = new JambonzOutputChannel();
    await out.sendResponse('c', { text: 'Hello 😀' });
    await out.sendResponse('c', { text: 'Pick', buttons: [{ title: 'a' }, { title: 'b' }] });
    await out.sendResponse('c', { custom: { text: 'custom words' }, image: 'https://x/i.png' });
    await out.sendResponse('c', { custom: { no: 'text' } });
    expect(strip(out.verbs())).toEqual([
      { verb: 'say', text: 'Hello ' },
      { verb: 'say', text: 'Pick. a, b' },
      { verb: 'say', text: 'custom words' },
      { verb: 'gather', input: ['speech', 'digits'], minDigits: 1, actionHook: '/gather' },
    ]);
  });

  it('ends the call after the words on action_hangup', async () => {
    const out = new JambonzOutputChannel();
    await out.sendResponse('c', { text: 'Bye' });
    await out.sendResponse('c', { custom: { hangup: true } });
    expect(strip(out.verbs())).toEqual([
      { verb: 'say', text: 'Bye' },
      { verb: 'pause', length: 1 },
      { verb: 'hangup' },
    ]);
  });

  it('reads gather results: speech (both shapes), partial, digits', () => {
    expect(
      gatherResult({
        reason: 'speechDetected',
        speech: { is_final: true, alternatives: [{ transcript: 'hi', confidence: 0.9 }] },
      }),
    ).toEqual({ text: 'hi', final: true });
    expect(
      gatherResult({
        reason: 'speechDetected',
        speech: { is_final: true, transcripts: [{ alternatives: [{ transcript: 'yo' }] }] },
      }),
    ).toEqual({ text: 'yo', final: true });
    expect(
      gatherResult({ reason: 'speechDetected', speech: { is_final: false, alternatives: [] } }),
    ).toEqual({ text: null, final: false });
    expect(gatherResult({ reason: 'dtmfDetected', digits: '42' })).toEqual({
      text: '42',
      final: true,
    });
  });
});
