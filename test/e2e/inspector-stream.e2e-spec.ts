import request from 'supertest';
import { sayRest } from 'test/utils/bots';
import { credentialsFile, removeTempDirs, trainMoodbot } from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';
import WebSocket from 'ws';

afterAll(removeTempDirs);

const TOKEN = 'inspector-secret';

/** The keys of Rasa's `current_state`, in its order. */
const STATE_KEYS = [
  'sender_id',
  'slots',
  'latest_message',
  'latest_event_time',
  'followup_action',
  'paused',
  'stack',
  'events',
  'latest_input_channel',
  'active_loop',
  'latest_action',
  'latest_action_name',
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tracker states are read loosely
type State = Record<string, any>;

interface Stream {
  ws: WebSocket;
  frames: string[];
  /** Resolves with the first frame (from index `from`) that satisfies `test`. */
  frame(test: (state: State) => boolean, from?: number): Promise<string>;
  closed: Promise<{ code: number; reason: string }>;
  retrieve(sender: string): void;
}

function wsUrl(base: string, channel: string, token?: string): string {
  const query = token === undefined ? '' : `?token=${encodeURIComponent(token)}`;
  return `${base.replace('http', 'ws')}/webhooks/${channel}/tracker_stream${query}`;
}

/** Opens a tracker_stream socket; rejects with the HTTP status when the upgrade is refused. */
function open(base: string, channel: string, token?: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(base, channel, token));
    const frames: string[] = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (data: Buffer) => {
      frames.push(data.toString('utf8'));
      for (const w of waiters.splice(0)) w();
    });
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.on('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', (e) => reject(e));
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        closed,
        retrieve: (sender) => ws.send(JSON.stringify({ action: 'retrieve', sender_id: sender })),
        frame: (test, from = 0) =>
          new Promise((found, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`no matching frame; got ${frames.length}`)),
              15_000,
            );
            const check = (): void => {
              for (let i = from; i < frames.length; i++) {
                if (test(JSON.parse(frames[i] as string))) {
                  clearTimeout(timer);
                  found(frames[i] as string);
                  return;
                }
              }
              waiters.push(check);
            };
            check();
          }),
      }),
    );
  });
}

const lastEvent = (s: State): State =>
  (s.events as State[])[(s.events as unknown[]).length - 1] ?? {};

describe('inspector without --inspect', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves no page and no stream (404)', async () => {
    await request(t.url).get('/webhooks/rest/inspect.html').expect(404);
    await request(t.url).get('/webhooks/rest/assets/inspector.js').expect(404);
    await expect(open(t.url, 'rest')).rejects.toThrow('HTTP 404');
  });
});

describe('inspector tracker_stream (moodbot, --inspect, auth token)', () => {
  let t: TestApp;

  beforeAll(async () => {
    const models = trainMoodbot();
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_MODEL: models,
        PARLEY_INSPECT: 'true',
        PARLEY_AUTH_TOKEN: TOKEN,
        PARLEY_CREDENTIALS: credentialsFile('socketio:\n  session_persistence: true\n'),
      },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('serves a page per channel with local assets only', async () => {
    for (const channel of ['rest', 'socketio']) {
      const page = await request(t.url).get(`/webhooks/${channel}/inspect.html`).expect(200);
      expect(page.type).toBe('text/html');
      expect(page.text).toContain(`&quot;channel&quot;:&quot;${channel}&quot;`);
      expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
    for (const asset of ['inspector.js', 'inspector.css', 'socket.io.min.js']) {
      const res = await request(t.url).get(`/webhooks/socketio/assets/${asset}`).expect(200);
      expect(res.text.length).toBeGreaterThan(1000);
      if (asset !== 'socket.io.min.js') expect(res.text).not.toMatch(/https?:\/\//);
    }
    await request(t.url).get('/webhooks/rest/assets/nope.js').expect(404);
    await request(t.url).get('/webhooks/rest/assets/..%2F..%2Fpackage.json').expect(404);
    await request(t.url).get('/webhooks/nochannel/inspect.html').expect(404);
  });

  it('needs ?token= when the server has an auth token', async () => {
    await expect(open(t.url, 'rest')).rejects.toThrow('HTTP 401');
    await expect(open(t.url, 'rest', 'wrong')).rejects.toThrow('HTTP 401');
    await expect(open(t.url, 'nochannel', TOKEN)).rejects.toThrow('HTTP 404');
    const s = await open(t.url, 'rest', TOKEN);
    s.ws.close();
  });

  it('answers retrieve with the raw tracker state, compact JSON in Rasa key order', async () => {
    const s = await open(t.url, 'socketio', TOKEN);
    try {
      const id = uniqueId('insp');
      s.retrieve(id);
      const frame = await s.frame(() => true);
      const state = JSON.parse(frame);
      expect(Object.keys(state)).toEqual(STATE_KEYS);
      expect(frame).toBe(JSON.stringify(state));
      expect(state).toMatchObject({ sender_id: id, events: [], paused: false });
    } finally {
      s.ws.close();
    }
  });

  it('pushes after the user message and after each action, only to sockets watching that sender', async () => {
    const a = await open(t.url, 'rest', TOKEN);
    const b = await open(t.url, 'rest', TOKEN);
    try {
      const x = uniqueId('insp-x');
      const y = uniqueId('insp-y');
      a.retrieve(x);
      b.retrieve(y);
      await a.frame((s) => s.sender_id === x);
      await b.frame((s) => s.sender_id === y);
      const before = a.frames.length;

      await sayRest(t.url, x, 'hello');
      const final = await a.frame(
        (s) => s.latest_message?.text === 'hello' && lastEvent(s).name === 'action_listen',
        before,
      );
      const pushed = a.frames.slice(before).map((f) => JSON.parse(f));
      // A new conversation: after the session start's action, then after the user message (its
      // last event the user event), then after each action with its events.
      expect(pushed.map((s) => lastEvent(s).event)).toEqual([
        'session_started',
        'action',
        'user',
        'bot',
        'action',
      ]);
      // session_started resets the tracker (Rasa): no latest action right after it.
      expect(pushed.map((s) => s.latest_action_name)).toEqual([
        null,
        'action_listen',
        'action_listen',
        'utter_greet',
        'action_listen',
      ]);
      expect(pushed.every((s) => s.sender_id === x)).toBe(true);

      // The last push is exactly what retrieve answers afterwards.
      const at = a.frames.length;
      a.retrieve(x);
      expect(await a.frame(() => true, at)).toBe(final);

      // B watched y all along: its next frame is y's turn, nothing of x came first.
      const bAt = b.frames.length;
      await sayRest(t.url, y, 'hello');
      const first = JSON.parse(await b.frame(() => true, bAt));
      expect(first.sender_id).toBe(y);
      expect(b.frames.slice(1).every((f) => JSON.parse(f).sender_id === y)).toBe(true);
    } finally {
      a.ws.close();
      b.ws.close();
    }
  });

  it('pushes the restart of the conversation (the events after it: none)', async () => {
    const s = await open(t.url, 'rest', TOKEN);
    try {
      const id = uniqueId('insp-r');
      await sayRest(t.url, id, 'hello');
      s.retrieve(id);
      await s.frame((st) => st.events.length > 0);
      const at = s.frames.length;
      await request(t.url)
        .post(`/conversations/${id}/tracker/events?token=${TOKEN}`)
        .send({ event: 'restart' })
        .expect(200);
      const after = JSON.parse(await s.frame(() => true, at));
      expect(after).toMatchObject({ sender_id: id, events: [] });
    } finally {
      s.ws.close();
    }
  });

  it('closes cleanly on hostile frames and ignores what Rasa ignores', async () => {
    const cases: Array<[string, (ws: WebSocket) => void, number]> = [
      ['not JSON', (ws) => ws.send('{"action": "retrieve",'), 1007],
      ['binary', (ws) => ws.send(Buffer.from([1, 2, 3])), 1003],
      ['an array', (ws) => ws.send('[1,2]'), 1003],
      ['a string', (ws) => ws.send('"retrieve"'), 1003],
      ['deep nesting', (ws) => ws.send('['.repeat(8_000) + ']'.repeat(7_900)), 1007],
      [
        'oversized',
        (ws) => ws.send(JSON.stringify({ action: 'x', pad: 'a'.repeat(20_000) })),
        1009,
      ],
      [
        'a sender_id no conversation can have',
        (ws) => ws.send(JSON.stringify({ action: 'retrieve', sender_id: 'a\u0000b' })),
        1008,
      ],
      ['invalid UTF-8', (ws) => ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false }), 1007],
    ];
    for (const [name, send, code] of cases) {
      const s = await open(t.url, 'rest', TOKEN);
      send(s.ws);
      const closed = await s.closed;
      expect({ name, code: closed.code }).toEqual({ name, code });
    }

    // Unknown actions and a retrieve without sender_id are ignored; the socket stays usable.
    const s = await open(t.url, 'rest', TOKEN);
    try {
      s.ws.send(JSON.stringify({ action: 'subscribe_all' }));
      s.ws.send(JSON.stringify({ action: 'retrieve' }));
      s.ws.send(JSON.stringify({ action: 'retrieve', sender_id: 42 }));
      const id = uniqueId('insp-ok');
      s.retrieve(id);
      const state = JSON.parse(await s.frame(() => true));
      expect(state.sender_id).toBe(id);
      expect(s.frames).toHaveLength(1);
    } finally {
      s.ws.close();
    }
    await request(t.url).get(`/status?token=${TOKEN}`).expect(200);
  });
});
