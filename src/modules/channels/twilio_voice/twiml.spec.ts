import { voiceResponse, xmlEscape } from './twiml';

const GATHER = {
  action: '/webhooks/twilio_voice/webhook',
  speechTimeout: '5',
  speechModel: 'default',
  enhanced: 'false',
  voice: 'woman',
};
const XML = '<?xml version="1.0" encoding="UTF-8"?>';
const OPEN =
  '<Gather input="speech" action="/webhooks/twilio_voice/webhook" actionOnEmptyResult="true" speechTimeout="5" speechModel="default" enhanced="false"';

describe('voiceResponse (Rasa _build_twilio_voice_response)', () => {
  it('says the last text inside the Gather, the others before it with a pause', () => {
    expect(voiceResponse([{ text: 'One.' }, { text: 'Two?' }], GATHER)).toBe(
      `${XML}<Response><Say voice="woman">One.</Say><Pause length="1"/>${OPEN}><Say voice="woman">Two?</Say></Gather></Response>`,
    );
  });

  it('listens with a bare Gather when there is nothing to say, and skips messages without text', () => {
    expect(voiceResponse([], GATHER)).toBe(`${XML}<Response>${OPEN}/></Response>`);
    expect(voiceResponse([{ custom: { a: 1 } }, { text: 'Hi' }, { image: 'x' }], GATHER)).toBe(
      `${XML}<Response>${OPEN}><Say voice="woman">Hi</Say></Gather></Response>`,
    );
  });

  it('hangs up at a hangup message, after saying what came before it', () => {
    expect(
      voiceResponse(
        [{ text: 'Bye!' }, { custom: { hangup: true } }, { text: 'never said' }],
        GATHER,
      ),
    ).toBe(`${XML}<Response><Say voice="woman">Bye!</Say><Pause length="1"/><Hangup/></Response>`);
  });

  it('escapes text and attributes', () => {
    expect(xmlEscape(`<a href="x">Tom & Jerry's</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;',
    );
    const twiml = voiceResponse([{ text: 'Fish & <chips>' }], {
      ...GATHER,
      action: 'https://x.example/hook?a=1&b="2"',
    });
    expect(twiml).toContain('action="https://x.example/hook?a=1&amp;b=&quot;2&quot;"');
    expect(twiml).toContain('<Say voice="woman">Fish &amp; &lt;chips&gt;</Say>');
  });
});
