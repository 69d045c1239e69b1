import { randomBytes } from 'node:crypto';
import { type FakePlatform, type PlatformCall, startFakePlatform } from 'test/utils/fake-platform';

/** Twilio's error JSON (`code`, `message`, `more_info`, `status`). */
function twilioError(status: number, code: number, message: string) {
  return {
    status,
    body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
  };
}

/** The parameters of a form body; `MediaUrl` (a list parameter) always as a list. */
export type TwilioForm = Record<string, string | string[]>;

export function twilioForm(raw: string): TwilioForm {
  const params = new URLSearchParams(raw);
  const form: TwilioForm = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    form[key] = key === 'MediaUrl' || all.length > 1 ? all : all[0]!;
  }
  return form;
}

/**
 * A stand-in for Twilio's Messages API (`POST /2010-04-01/Accounts/<sid>/Messages.json`), a
 * real HTTP server written from Twilio's API reference: HTTP Basic auth with the account SID and
 * auth token (else 401, error 20003), a form body with `To` and `Body` or `MediaUrl` (else 400,
 * errors 21604 / 21602), answered 201 with the created Message resource. `rateLimitOnce` answers
 * the next call 429 (error 20429) with `Retry-After: 0`.
 */
export interface FakeTwilio {
  readonly url: string;
  readonly accountSid: string;
  /** The auth token the fake accepts; change it to make Parley's calls fail with 401. */
  authToken: string;
  readonly platform: FakePlatform;
  /** The calls received, oldest first. */
  readonly calls: PlatformCall[];
  /** The form of each call, oldest first. */
  forms(): TwilioForm[];
  rateLimitOnce(): void;
  close(): Promise<void>;
}

export async function startFakeTwilio(accountSid: string, authToken: string): Promise<FakeTwilio> {
  const state = { authToken };
  const path = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
  const platform = await startFakePlatform((call) => {
    if (call.method !== 'POST' || call.path !== path) {
      return twilioError(404, 20404, `The requested resource ${call.path} was not found`);
    }
    const basic = `Basic ${Buffer.from(`${accountSid}:${state.authToken}`).toString('base64')}`;
    if (call.headers.authorization !== basic) return twilioError(401, 20003, 'Authenticate');
    const form = twilioForm(call.raw);
    const media = (form.MediaUrl ?? []) as string[];
    if (typeof form.To !== 'string') {
      return twilioError(400, 21604, "A 'To' phone number is required.");
    }
    if ((form.Body === undefined || form.Body === '') && media.length === 0 && !form.ContentSid) {
      return twilioError(400, 21602, 'Message body is required.');
    }
    const sid = `SM${randomBytes(16).toString('hex')}`;
    const now = new Date().toUTCString().replace('GMT', '+0000');
    return {
      status: 201,
      body: {
        account_sid: accountSid,
        api_version: '2010-04-01',
        body: form.Body ?? '',
        date_created: now,
        date_sent: null,
        date_updated: now,
        direction: 'outbound-api',
        error_code: null,
        error_message: null,
        from: form.From ?? null,
        messaging_service_sid: form.MessagingServiceSid ?? null,
        num_media: String(media.length),
        num_segments: '1',
        price: null,
        price_unit: 'USD',
        sid,
        status: 'queued',
        subresource_uris: { media: `${path.replace('.json', '')}/${sid}/Media.json` },
        to: form.To,
        uri: `${path.replace('.json', '')}/${sid}.json`,
      },
    };
  });
  return {
    url: platform.url,
    accountSid,
    get authToken() {
      return state.authToken;
    },
    set authToken(value: string) {
      state.authToken = value;
    },
    platform,
    calls: platform.calls,
    forms: () => platform.calls.map((c) => twilioForm(c.raw)),
    rateLimitOnce: () =>
      platform.once(path, {
        ...twilioError(429, 20429, 'Too Many Requests'),
        headers: { 'Retry-After': '0' },
      }),
    close: () => platform.close(),
  };
}
