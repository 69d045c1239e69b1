import {
  type PlatformCall,
  type PlatformClient,
} from 'src/modules/channels/connector/platform-client';
import { TwilioVoiceOutputChannel } from 'src/modules/channels/twilio_voice/twilio-voice.output-channel';
import { incomingText } from './twilio-connector';
import { TwilioOutputChannel, twilioParams } from './twilio.output-channel';

/** A client that records the form bodies an output channel sends and answers each 201. */
function recorder(): { client: PlatformClient; calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  const client = {
    call: (call: PlatformCall) => {
      calls.push([call.path, call.form]);
      return Promise.resolve({ ok: true, status: 201, body: {} });
    },
  } as unknown as PlatformClient;
  return { client, calls };
}

const PATH = '/2010-04-01/Accounts/AC1/Messages.json';

describe('incomingText (Rasa TwilioInput)', () => {
  it('reads Body, ¡ as @, else the first media URL', () => {
    expect(incomingText([['Body', 'mail me at a¡b.example']])).toBe('mail me at a@b.example');
    expect(
      incomingText([
        ['Body', ''],
        ['NumMedia', '1'],
        ['MediaUrl0', 'https://api.twilio.com/m/1'],
      ]),
    ).toBe('https://api.twilio.com/m/1');
    expect(incomingText([['Body', '']])).toBeNull();
    expect(incomingText([['MessageStatus', 'delivered']])).toBeNull();
  });
});

describe('Twilio output mapping (Rasa TwilioOutput)', () => {
  it('sends text parts, images as MediaUrl, buttons as text lines', async () => {
    const { client, calls } = recorder();
    const out = new TwilioOutputChannel(client, 'AC1', 'tok', '+15005550006');
    await out.sendResponse('+14155550100', { text: 'one\n\ntwo' });
    await out.sendResponse('+14155550100', { image: 'https://x.example/p.jpg' });
    await out.sendResponse('+14155550100', {
      text: 'pick',
      buttons: [{ title: 'a', payload: '/a' }],
    });
    const sms = (Body: string) => [PATH, { To: '+14155550100', From: '+15005550006', Body }];
    expect(calls).toEqual([
      sms('one'),
      sms('two'),
      [PATH, { To: '+14155550100', From: '+15005550006', MediaUrl: ['https://x.example/p.jpg'] }],
      sms('pick'),
      sms('1: a (/a)'),
    ]);
  });

  it('answers a WhatsApp sender from the whatsapp: number', async () => {
    const { client, calls } = recorder();
    await new TwilioOutputChannel(client, 'AC1', 'tok', '+15005550006').sendResponse(
      'whatsapp:+14155550100',
      { text: 'hi' },
    );
    await new TwilioOutputChannel(client, 'AC1', 'tok', 'whatsapp:+15005550006').sendResponse(
      'whatsapp:+14155550100',
      { text: 'hi' },
    );
    const wa = { To: 'whatsapp:+14155550100', From: 'whatsapp:+15005550006', Body: 'hi' };
    expect(calls).toEqual([
      [PATH, wa],
      [PATH, wa],
    ]);
  });

  it('sends custom JSON as Twilio parameters with Rasa defaults, and ignores a hangup', async () => {
    const { client, calls } = recorder();
    const out = new TwilioOutputChannel(client, 'AC1', 'tok', '+15005550006');
    await out.sendResponse('+1415', { custom: { media_url: ['https://x.example/a.png'] } });
    await out.sendResponse('+1415', { custom: { body: 'hey', messaging_service_sid: 'MG1' } });
    await out.sendResponse('+1415', {
      custom: { to: '+1999', content_sid: 'HX1', content_variables: { 1: 'x' } },
    });
    await out.sendResponse('+1415', { custom: { hangup: true } });
    expect(calls).toEqual([
      [PATH, { MediaUrl: ['https://x.example/a.png'], To: '+1415', From: '+15005550006' }],
      [PATH, { Body: 'hey', MessagingServiceSid: 'MG1', To: '+1415' }],
      [
        PATH,
        {
          To: '+1999',
          ContentSid: 'HX1',
          ContentVariables: '{"1":"x"}',
          Body: '',
          From: '+15005550006',
        },
      ],
    ]);
    expect(twilioParams({ from_: '+1', status_callback: 'https://s', x: null })).toEqual({
      From: '+1',
      StatusCallback: 'https://s',
    });
  });
});

describe('Twilio Voice output (Rasa TwilioVoiceCollectingOutputChannel)', () => {
  it('speaks buttons as their titles and leaves images out', async () => {
    const out = new TwilioVoiceOutputChannel();
    await out.sendResponse('+1415', {
      text: 'How is it going?',
      buttons: [
        { title: 'good', payload: '/good' },
        { title: 'bad', payload: '/bad' },
      ],
    });
    await out.sendResponse('+1415', { text: 'Look:', image: 'https://x.example/p.jpg' });
    expect(out.messages.map((m) => m.text)).toEqual(['How is it going?', 'good', 'bad', 'Look:']);
  });
});
