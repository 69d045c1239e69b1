import { sign } from 'jsonwebtoken';
import { io, type Socket } from 'socket.io-client';
import request from 'supertest';
import { credentialsFile, removeTempDirs, trainMoodbot } from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';

afterAll(removeTempDirs);

const GREETING = {
  text: 'Hi there! How is your day going?',
  quick_replies: [
    { content_type: 'text', title: 'good', payload: '/mood_great' },
    { content_type: 'text', title: 'not so good', payload: '/mood_unhappy' },
  ],
};

function connect(url: string, options: Parameters<typeof io>[1] = {}): Socket {
  return io(url, { path: '/socket.io', transports: ['websocket'], forceNew: true, ...options });
}

/** Resolves with the next `count` payloads of `event`. */
function next(socket: Socket, event: string, count = 1): Promise<unknown[]> {
  return new Promise((resolve) => {
    const got: unknown[] = [];
    const on = (payload: unknown): void => {
      got.push(payload);
      if (got.length === count) {
        socket.off(event, on);
        resolve(got);
      }
    };
    socket.on(event, on);
  });
}

async function session(socket: Socket, sessionId: string): Promise<void> {
  const confirmed = next(socket, 'session_confirm');
  socket.emit('session_request', { session_id: sessionId });
  expect(await confirmed).toEqual([sessionId]);
}

/** The socketio channel with the moodbot through the real dialogue engine, over real sockets. */
describe('socketio channel (moodbot)', () => {
  let models: string;
  let t: TestApp;

  beforeAll(async () => {
    models = trainMoodbot();
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_MODEL: models,
        PARLEY_CREDENTIALS: credentialsFile('socketio:\n  session_persistence: true\n'),
      },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('answers user_uttered with bot_uttered: the greeting with quick replies', async () => {
    const socket = connect(t.url);
    try {
      const sessionId = uniqueId('sio');
      await session(socket, sessionId);
      const replies = next(socket, 'bot_uttered');
      socket.emit('user_uttered', { message: 'hi', session_id: sessionId });
      expect(await replies).toEqual([GREETING]);

      const unhappy = next(socket, 'bot_uttered', 3);
      socket.emit('user_uttered', { message: '/mood_unhappy', session_id: sessionId });
      expect(await unhappy).toEqual([
        { text: 'Maybe this picture brightens it up:' },
        {
          attachment: {
            type: 'image',
            payload: { src: 'https://images.example.org/parley/sunrise.jpg' },
          },
        },
        { text: 'Did that lift your mood?' },
      ]);

      const tracker = await request(t.url).get(`/conversations/${sessionId}/tracker`).expect(200);
      expect(tracker.body.latest_input_channel).toBe('socketio');
      expect(tracker.body.latest_message.intent.name).toBe('mood_unhappy');
    } finally {
      socket.close();
    }
  });

  it('emits trigger_intent answers to the session with output_channel=socketio or latest', async () => {
    const socket = connect(t.url);
    try {
      const sessionId = uniqueId('sio');
      await session(socket, sessionId);
      const pushed = next(socket, 'bot_uttered');
      const res = await request(t.url)
        .post(`/conversations/${sessionId}/trigger_intent?output_channel=socketio`)
        .send({ name: 'greet' })
        .expect(200);
      expect(await pushed).toEqual([GREETING]);
      expect(res.body.messages).toBeUndefined();

      const latest = next(socket, 'bot_uttered');
      socket.emit('user_uttered', { message: '/bot_challenge', session_id: sessionId });
      await latest;
      const again = next(socket, 'bot_uttered');
      await request(t.url)
        .post(`/conversations/${sessionId}/trigger_intent?output_channel=latest`)
        .send({ name: 'bot_challenge' })
        .expect(200);
      expect(await again).toEqual([{ text: 'I am a bot, built with Parley.' }]);
    } finally {
      socket.close();
    }
  });

  it('keeps the conversation across reconnects with session_persistence', async () => {
    const sessionId = uniqueId('sio');
    const first = connect(t.url);
    try {
      await session(first, sessionId);
      const greeted = next(first, 'bot_uttered');
      first.emit('user_uttered', { message: '/greet', session_id: sessionId });
      await greeted;
    } finally {
      first.close();
    }
    const second = connect(t.url);
    try {
      await session(second, sessionId);
      const answer = next(second, 'bot_uttered');
      second.emit('user_uttered', { message: '/mood_great', session_id: sessionId });
      expect(await answer).toEqual([{ text: 'Glad to hear it. Keep it up!' }]);
    } finally {
      second.close();
    }
    const tracker = await request(t.url).get(`/conversations/${sessionId}/tracker`).expect(200);
    const intents = tracker.body.events
      .filter((e: { event: string }) => e.event === 'user')
      .map((e: { parse_data: { intent: { name: string } } }) => e.parse_data.intent.name);
    expect(intents).toEqual(['greet', 'mood_great']);
  });

  it('ignores a message without session_id when sessions persist, and stays usable', async () => {
    const socket = connect(t.url);
    try {
      const sessionId = uniqueId('sio');
      await session(socket, sessionId);
      const replies: unknown[] = [];
      socket.on('bot_uttered', (m: unknown) => replies.push(m));
      socket.emit('user_uttered', { message: '/greet' });
      socket.emit('user_uttered', 'not an object');
      const answer = next(socket, 'bot_uttered');
      socket.emit('user_uttered', { message: '/bot_challenge', session_id: sessionId });
      await answer;
      expect(replies).toEqual([{ text: 'I am a bot, built with Parley.' }]);
    } finally {
      socket.close();
    }
  });

  describe('with custom event names, path, namespace, metadata_key, no persistence and a JWT', () => {
    let custom: TestApp;
    const secret = 'socket-secret';

    beforeAll(async () => {
      custom = await startTestApp({
        withDomain: false,
        env: {
          PARLEY_MODEL: models,
          PARLEY_CREDENTIALS: credentialsFile(
            [
              'socketio:',
              '  user_message_evt: user_says',
              '  bot_message_evt: bot_says',
              '  metadata_key: customData',
              '  socketio_path: /chat-socket',
              '  namespace: /bot',
              `  jwt_key: ${secret}`,
              '  jwt_method: HS256',
            ].join('\n'),
          ),
        },
      });
    });
    afterAll(async () => {
      await custom?.close();
    });

    it('refuses a connection without a valid token', async () => {
      for (const auth of [{}, { token: sign({ sub: 'u' }, 'wrong-secret') }]) {
        const socket = connect(`${custom.url}/bot`, {
          path: '/chat-socket',
          auth,
          reconnection: false,
        });
        try {
          const error = await new Promise<Error>((resolve) =>
            socket.once('connect_error', resolve),
          );
          expect(error.message).toBe('not authorized');
        } finally {
          socket.close();
        }
      }
    });

    it('uses the socket id as sender and stores the metadata under metadata_key', async () => {
      const socket = connect(`${custom.url}/bot`, {
        path: '/chat-socket',
        auth: { token: sign({ sub: 'u' }, secret) },
      });
      try {
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        const answer = next(socket, 'bot_says');
        socket.emit('user_says', { message: '/greet', customData: { language: 'en' } });
        expect(await answer).toEqual([GREETING]);
        const tracker = await request(custom.url)
          .get(`/conversations/${socket.id}/tracker`)
          .expect(200);
        const user = tracker.body.events.find((e: { event: string }) => e.event === 'user');
        expect(user.metadata).toMatchObject({ language: 'en' });
        expect(user.input_channel).toBe('socketio');
      } finally {
        socket.close();
      }
    });
  });
});
