import type { Request } from 'express';
import { DialogueError } from 'src/core';
import { formParams, signedUrls, twilioSignature, verifiedForm } from './twilio-signature';

/** The worked example of Twilio's "Validating requests" documentation. */
const DOC_URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const DOC_TOKEN = '12345';
const DOC_PARAMS: Array<[string, string]> = [
  ['CallSid', 'CA1234567890ABCDE'],
  ['Caller', '+14158675309'],
  ['Digits', '1234'],
  ['From', '+14158675309'],
  ['To', '+18005551212'],
];
const DOC_SIGNATURE = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

function request(body: string, headers: Record<string, string>, url = '/webhooks/twilio/webhook') {
  return {
    body: Buffer.from(body),
    headers,
    protocol: 'https',
    host: 'bot.example.org',
    originalUrl: url,
  } as unknown as Request;
}

describe('twilioSignature (X-Twilio-Signature)', () => {
  it("gives the signature of Twilio's documented example", () => {
    expect(twilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS)).toBe(DOC_SIGNATURE);
    // The fields are sorted by name whatever their order in the body.
    expect(twilioSignature(DOC_TOKEN, DOC_URL, [...DOC_PARAMS].reverse())).toBe(DOC_SIGNATURE);
  });

  it('depends on the URL, the token and every field', () => {
    expect(twilioSignature(DOC_TOKEN, 'https://mycompany.com/myapp.php', DOC_PARAMS)).not.toBe(
      DOC_SIGNATURE,
    );
    expect(twilioSignature('54321', DOC_URL, DOC_PARAMS)).not.toBe(DOC_SIGNATURE);
    expect(twilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS.slice(1))).not.toBe(DOC_SIGNATURE);
  });

  it('reads a form body as Twilio sends it (+ and %-escapes decoded)', () => {
    expect(formParams(Buffer.from('From=%2B14158675309&Body=hi+there&Body=again'))).toEqual([
      ['From', '+14158675309'],
      ['Body', 'hi there'],
      ['Body', 'again'],
    ]);
  });
});

describe('signedUrls', () => {
  it('rebuilds the URL from the request, with and without the default port', () => {
    expect(signedUrls(request('', {}), null)).toEqual([
      'https://bot.example.org/webhooks/twilio/webhook',
      'https://bot.example.org:443/webhooks/twilio/webhook',
    ]);
  });

  it('takes the configured webhook_url instead', () => {
    expect(signedUrls(request('', {}), 'http://proxy.example.org:80/bot/twilio?x=1')).toEqual([
      'http://proxy.example.org:80/bot/twilio?x=1',
      'http://proxy.example.org/bot/twilio?x=1',
    ]);
    expect(signedUrls(request('', {}), 'https://h.example.org:8443/x')).toEqual([
      'https://h.example.org:8443/x',
    ]);
  });
});

describe('verifiedForm', () => {
  const body = 'From=%2B14158675309&Body=hello&MessageSid=SM1';
  const url = 'https://bot.example.org/webhooks/twilio/webhook';
  const sign = (u: string, token = 'tok') =>
    twilioSignature(token, u, formParams(Buffer.from(body)));

  it('returns the fields of a request signed for its URL (or the same URL with :443)', () => {
    expect(
      verifiedForm('twilio', 'tok', null, request(body, { 'x-twilio-signature': sign(url) })),
    ).toHaveLength(3);
    const with443 = 'https://bot.example.org:443/webhooks/twilio/webhook';
    expect(
      verifiedForm('twilio', 'tok', null, request(body, { 'x-twilio-signature': sign(with443) })),
    ).toHaveLength(3);
  });

  it.each([
    ['missing', {}],
    ['empty', { 'x-twilio-signature': '' }],
    ['made with another token', { 'x-twilio-signature': sign(url, 'other') }],
    ['made for another URL', { 'x-twilio-signature': sign('https://elsewhere.example.org/x') }],
  ])('refuses a signature %s with a 401', (_, headers: Record<string, string>) => {
    try {
      verifiedForm('twilio', 'tok', null, request(body, headers));
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(DialogueError);
      expect((e as DialogueError).code).toBe('AUTH.NOT_AUTHENTICATED');
    }
  });

  it('checks against webhook_url when it is set, not the URL the request came in on', () => {
    const publicUrl = 'https://public.example.org/twilio';
    expect(
      verifiedForm(
        'twilio',
        'tok',
        publicUrl,
        request(body, { 'x-twilio-signature': sign(publicUrl) }),
      ),
    ).toHaveLength(3);
    expect(() =>
      verifiedForm('twilio', 'tok', publicUrl, request(body, { 'x-twilio-signature': sign(url) })),
    ).toThrow(DialogueError);
  });
});
