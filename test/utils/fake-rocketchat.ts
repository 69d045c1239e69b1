import { type FakePlatform, startFakePlatform } from 'test/utils/fake-platform';

/** A fake Rocket.Chat server and what it expects. */
export interface FakeRocketChat {
  readonly platform: FakePlatform;
  /** The user id of the bot user (`X-User-Id`). */
  readonly userId: string;
  /** Forgets every auth token it handed out, as a revoked or expired session. */
  expireTokens(): void;
}

/**
 * A stand-in for a Rocket.Chat server's REST API, from Rocket.Chat's public API docs:
 * `POST /api/v1/login` with `{user, password}` answers `{status: "success", data: {authToken,
 * userId}}` (401 `{status: "error"}` for a wrong password); `POST /api/v1/chat.postMessage`
 * needs the `X-Auth-Token` and `X-User-Id` headers (401 without a valid pair) and answers
 * `{ts, channel, message, success: true}`. Every call is recorded.
 */
export async function startFakeRocketChat(user: string, password: string): Promise<FakeRocketChat> {
  const userId = 'botUserId42';
  const tokens = new Set<string>();
  let issued = 0;
  const platform = await startFakePlatform((call) => {
    const body = (call.body ?? {}) as Record<string, unknown>;
    if (call.method === 'POST' && call.path === '/api/v1/login') {
      if (body.user !== user || body.password !== password) {
        return {
          status: 401,
          body: { status: 'error', error: 'Unauthorized', message: 'Unauthorized' },
        };
      }
      issued += 1;
      const authToken = `auth-token-${issued}`;
      tokens.add(authToken);
      return {
        body: {
          status: 'success',
          data: { authToken, userId, me: { _id: userId, username: user } },
        },
      };
    }
    if (call.method === 'POST' && call.path === '/api/v1/chat.postMessage') {
      const token = call.headers['x-auth-token'];
      if (typeof token !== 'string' || !tokens.has(token) || call.headers['x-user-id'] !== userId) {
        return {
          status: 401,
          body: { status: 'error', message: 'You must be logged in to do this.' },
        };
      }
      return {
        body: {
          ts: 1700000000000,
          channel: body.channel ?? body.roomId,
          message: {
            _id: `m${tokens.size}`,
            rid: body.roomId,
            msg: body.text ?? '',
            u: { _id: userId, username: user },
          },
          success: true,
        },
      };
    }
    return { status: 404, body: { success: false, error: 'Not found' } };
  });
  return { platform, userId, expireTokens: () => tokens.clear() };
}

/**
 * The body of a Rocket.Chat outgoing integration ("Outgoing WebHook") request, as Rocket.Chat's
 * integration docs show it.
 */
export function outgoingMessage(fields: {
  token: string;
  roomId: string;
  userName: string;
  text: string;
  messageId: string;
}): Record<string, unknown> {
  return {
    token: fields.token,
    bot: false,
    channel_id: fields.roomId,
    channel_name: 'general',
    message_id: fields.messageId,
    timestamp: '2026-11-28T12:00:00.000Z',
    user_id: `uid-${fields.userName}`,
    user_name: fields.userName,
    text: fields.text,
    siteUrl: 'https://chat.example.org',
  };
}
