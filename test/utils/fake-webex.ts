import { type FakePlatform, type PlatformCall, startFakePlatform } from 'test/utils/fake-platform';

/** The bot's person id in the fake (what `GET /v1/people/me` answers). */
export const WEBEX_BOT_ID = 'Y2lzY29zcGFyazovL3VzL1BFT1BMRS9ib3QtcGFybGV5';

/** A message as the Webex Messages API returns it. */
export interface WebexMessage {
  readonly id: string;
  readonly roomId: string;
  readonly roomType: 'direct' | 'group';
  readonly personId: string;
  readonly personEmail: string;
  readonly text?: string;
  readonly created: string;
}

/**
 * A stand-in for the Webex REST API (developer.webex.com, Messages and People), as a real HTTP
 * server: `GET /v1/people/me` answers the bot, `GET /v1/messages/{id}` a message the test
 * `put` (404 otherwise), `POST /v1/messages` records the bot's message and answers it with an
 * id. Every call must carry the bot's token; one without it is a 401, as Webex answers.
 */
export interface FakeWebex {
  readonly platform: FakePlatform;
  readonly url: string;
  /** Makes a message readable, as if a user had written it. */
  put(message: WebexMessage): void;
  /** The messages the bot posted, oldest first. */
  posted(): PlatformCall[];
  close(): Promise<void>;
}

export async function startFakeWebex(token: string): Promise<FakeWebex> {
  const messages = new Map<string, WebexMessage>();
  const platform = await startFakePlatform((call) => {
    if (call.headers.authorization !== `Bearer ${token}`) {
      return { status: 401, body: { message: 'The request requires a valid access token.' } };
    }
    if (call.method === 'GET' && call.path === '/v1/people/me') {
      return {
        body: {
          id: WEBEX_BOT_ID,
          emails: ['parley@webex.bot'],
          displayName: 'Parley',
          type: 'bot',
        },
      };
    }
    const read = /^\/v1\/messages\/([^/]+)$/.exec(call.path);
    if (call.method === 'GET' && read !== null) {
      const message = messages.get(decodeURIComponent(read[1]!));
      return message === undefined
        ? { status: 404, body: { message: 'The requested resource could not be found.' } }
        : { body: message };
    }
    if (call.method === 'POST' && call.path === '/v1/messages') {
      const body = call.body as Record<string, unknown>;
      return {
        body: {
          id: `bot-message-${platform.calls.length}`,
          personId: WEBEX_BOT_ID,
          created: new Date().toISOString(),
          ...body,
        },
      };
    }
    return { status: 404, body: { message: 'not found' } };
  });
  return {
    platform,
    url: platform.url,
    put: (message) => messages.set(message.id, message),
    posted: () => platform.calls.filter((c) => c.method === 'POST' && c.path === '/v1/messages'),
    close: () => platform.close(),
  };
}
