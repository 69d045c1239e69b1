import {
  verifyHttpSignature,
  type SignedRequest,
  type VerifyOptions,
} from 'src/core/voice/http-signature';

const API_KEY = 'SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh';
const SECRET = Buffer.from('TXlTdXBlclNlY3JldEtleVRlbGxOby0xITJAMyM0JDU=', 'base64');
const IDS = {
  'audiohook-organization-id': 'd7934305-0972-4844-938e-9060eef73d05',
  'audiohook-session-id': '30b0e395-84d3-4570-ac13-9a62d8f514c0',
  'audiohook-correlation-id': 'e160e428-53e2-487c-977d-96989bf5c99d',
  'x-api-key': API_KEY,
};
const REQUIRED = [
  '@request-target',
  '@authority',
  'audiohook-organization-id',
  'audiohook-session-id',
  'audiohook-correlation-id',
  'x-api-key',
];

function genesysOptions(now: number): VerifyOptions {
  return {
    now,
    maxSignatureAge: 10,
    requiredComponents: REQUIRED,
    keyFor: (keyid) => (keyid === API_KEY ? SECRET : null),
    precondition: (p) =>
      (p.nonce ?? '').length < 22
        ? 'nonce too short'
        : p.keyid !== API_KEY
          ? 'keyid mismatch'
          : null,
  };
}

const V1: SignedRequest = {
  method: 'GET',
  target: '/api/v1/voicebiometrics/ws',
  headers: {
    host: 'audiohook.example.com',
    ...IDS,
    signature: 'sig1=:NZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh4=:',
    'signature-input':
      'sig1=("@request-target" "@authority" "audiohook-organization-id" "audiohook-session-id" "audiohook-correlation-id" "x-api-key");keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh";nonce="VGhpc0lzQVVuaXF1ZU5vbmNl";alg="hmac-sha256";created=1641013200;expires=3282026430',
  },
};

function withHeaders(
  request: SignedRequest,
  headers: Record<string, string | undefined>,
): SignedRequest {
  return { ...request, headers: { ...request.headers, ...headers } };
}

describe('verifyHttpSignature', () => {
  it('verifies the AudioHook documentation example (V1)', () => {
    expect(verifyHttpSignature(V1, genesysOptions(1641013201)).code).toBe('VERIFIED');
  });

  it('verifies V1 whatever the order of the headers', () => {
    const shuffled: SignedRequest = {
      ...V1,
      headers: Object.fromEntries(Object.entries(V1.headers).reverse()),
    };
    expect(verifyHttpSignature(shuffled, genesysOptions(1641013201)).code).toBe('VERIFIED');
  });

  it('verifies the builder example that signs `host` instead of `@authority` (V2)', () => {
    const v2 = withHeaders(V1, {
      signature: 'sig1=:zupMJUMfd/kMuvKc5zhRyfJPE3jTROuz1S1hn8SCTpE=:',
      'signature-input':
        'sig1=("@request-target" "host" "audiohook-organization-id" "audiohook-session-id" "audiohook-correlation-id" "x-api-key");keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh";nonce="VGhpc0lzQVVuaXF1ZU5vbmNl";alg="hmac-sha256";created=1641013200;expires=3282026430',
    });
    const options = { ...genesysOptions(1641013201), requiredComponents: [] };
    expect(verifyHttpSignature(v2, options).code).toBe('VERIFIED');
  });

  it('verifies the RFC draft B.2.5 HMAC example with @authority from a lookup or from Host (V3)', () => {
    const key = Buffer.from(
      'uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==',
      'base64',
    );
    const headers = {
      date: 'Tue, 20 Apr 2021 02:07:55 GMT',
      'content-type': 'application/json',
      'signature-input':
        'sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"',
      signature: 'sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:',
    };
    const options: VerifyOptions = {
      now: 1618884474,
      keyFor: (keyid) => (keyid === 'test-shared-secret' ? key : null),
    };
    const viaLookup: SignedRequest = {
      method: 'POST',
      target: '/foo?param=Value&Pet=dog',
      headers,
      authority: 'example.com',
    };
    const viaHost: SignedRequest = {
      method: 'POST',
      target: '/foo?param=Value&Pet=dog',
      headers: { ...headers, host: 'example.com' },
    };
    expect(verifyHttpSignature(viaLookup, options).code).toBe('VERIFIED');
    expect(verifyHttpSignature(viaHost, options).code).toBe('VERIFIED');
    expect(verifyHttpSignature(viaHost, { ...options, keyFor: () => null }).code).toBe('FAILED');
  });

  it('follows the component order of Signature-Input, as Genesys production sends it (V4)', () => {
    const v4 = withHeaders(V1, {
      signature: 'sig1=:ldACCVdGpzT50CIPiG5jQsjSu71OILmmqo3Ayc28ZSg=:',
      'signature-input':
        'sig1=("@request-target" "audiohook-session-id" "audiohook-organization-id" "audiohook-correlation-id" "x-api-key" "@authority");keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh";nonce="VGhpc0lzQVVuaXF1ZU5vbmNl";alg="hmac-sha256";created=1641013200;expires=3282026430',
    });
    expect(verifyHttpSignature(v4, genesysOptions(1641013201)).code).toBe('VERIFIED');
  });

  it('verifies a local request (V5) inside its window and expires it by the 10 s age rule', () => {
    const v5: SignedRequest = {
      method: 'GET',
      target: '/webhooks/genesys/websocket',
      headers: {
        host: 'localhost:5005',
        ...IDS,
        'signature-input':
          'sig1=("@request-target" "@authority" "audiohook-organization-id" "audiohook-session-id" "audiohook-correlation-id" "x-api-key");keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh";nonce="VGhpc0lzQVVuaXF1ZU5vbmNl";alg="hmac-sha256";created=1700000000;expires=1700000030',
        signature: 'sig1=:EYcGWpBahHngHso8R+682xoj9spON8CnBDzde7kurYs=:',
      },
    };
    for (const now of [1700000001, 1700000002, 1700000003]) {
      expect(verifyHttpSignature(v5, genesysOptions(now)).code).toBe('VERIFIED');
    }
    expect(verifyHttpSignature(v5, genesysOptions(1700000008)).code).toBe('EXPIRED');
    expect(verifyHttpSignature(v5, genesysOptions(1699999990)).code).toBe('PRECONDITION');
  });

  it('fails when one byte of the signature changes', () => {
    const bad = withHeaders(V1, {
      signature: 'sig1=:MZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh4=:',
    });
    expect(verifyHttpSignature(bad, genesysOptions(1641013201)).code).toBe('FAILED');
    const padding = withHeaders(V1, {
      signature: 'sig1=:NZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh5=:',
    });
    expect(verifyHttpSignature(padding, genesysOptions(1641013201)).code).toBe('INVALID');
  });

  it('fails when a covered header changes', () => {
    const bad = withHeaders(V1, { 'audiohook-session-id': '30b0e395-84d3-4570-ac13-9a62d8f514c1' });
    expect(verifyHttpSignature(bad, genesysOptions(1641013201)).code).toBe('FAILED');
  });

  it('refuses a nonce shorter than 22 characters and a keyid other than the API key', () => {
    const shortNonce = withHeaders(V1, {
      'signature-input': (V1.headers['signature-input'] as string).replace(
        'VGhpc0lzQVVuaXF1ZU5vbmNl',
        'abc',
      ),
    });
    expect(verifyHttpSignature(shortNonce, genesysOptions(1641013201))).toMatchObject({
      code: 'PRECONDITION',
      reason: 'nonce too short',
    });
    const otherKey = withHeaders(V1, {
      'signature-input': (V1.headers['signature-input'] as string).replace(
        'keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh"',
        'keyid="other"',
      ),
    });
    expect(verifyHttpSignature(otherKey, genesysOptions(1641013201)).code).toBe('PRECONDITION');
  });

  it('requires every Genesys component to be covered', () => {
    const partial = withHeaders(V1, {
      'signature-input': (V1.headers['signature-input'] as string).replace(
        ' "audiohook-correlation-id"',
        '',
      ),
    });
    expect(verifyHttpSignature(partial, genesysOptions(1641013201))).toMatchObject({
      code: 'PRECONDITION',
      reason: 'required component "audiohook-correlation-id" is not covered',
    });
  });

  it('classifies malformed, unknown and unsupported input', () => {
    const input = V1.headers['signature-input'] as string;
    const now = genesysOptions(1641013201);
    expect(
      verifyHttpSignature(withHeaders(V1, { 'signature-input': `${input};foo=1` }), now).code,
    ).toBe('INVALID');
    expect(
      verifyHttpSignature(
        withHeaders(V1, { 'signature-input': input.replace('hmac-sha256', 'rsa-pss-sha512') }),
        now,
      ).code,
    ).toBe('UNSUPPORTED');
    expect(verifyHttpSignature(withHeaders(V1, { signature: undefined }), now).code).toBe(
      'INVALID',
    );
    expect(
      verifyHttpSignature(
        withHeaders(V1, { signature: undefined, 'signature-input': undefined }),
        now,
      ).code,
    ).toBe('UNSIGNED');
    expect(verifyHttpSignature(withHeaders(V1, { signature: 'sig1=(' }), now).code).toBe('INVALID');
    expect(verifyHttpSignature(withHeaders(V1, { signature: 'sig2=:AAAA:' }), now).code).toBe(
      'INVALID',
    );
    expect(
      verifyHttpSignature(
        withHeaders(V1, {
          'signature-input': input.replace('"x-api-key"', '"x-api-key" "x-api-key"'),
        }),
        now,
      ).code,
    ).toBe('INVALID');
    expect(
      verifyHttpSignature(
        withHeaders(V1, { 'signature-input': input.replace('"x-api-key"', '"x-missing"') }),
        now,
      ).code,
    ).toBe('PRECONDITION');
  });
});
