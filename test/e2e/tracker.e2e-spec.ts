import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

/** Rasa's maintainers' 14-event store: two sessions, a restart in the first. */
function fourteenEvents(t0: number): Record<string, unknown>[] {
  let t = t0;
  const ts = (): number => (t += 1);
  return [
    { event: 'action', timestamp: ts(), name: 'action_session_start' },
    { event: 'session_started', timestamp: ts() },
    { event: 'action', timestamp: ts(), name: 'action_listen' },
    {
      event: 'user',
      timestamp: ts(),
      text: 'hi',
      parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
    },
    { event: 'action', timestamp: ts(), name: 'utter_greet' },
    { event: 'bot', timestamp: ts(), text: 'Hey! How are you?' },
    { event: 'action', timestamp: ts(), name: 'action_listen' },
    {
      event: 'user',
      timestamp: ts(),
      text: '/restart',
      parse_data: { intent: { name: 'restart', confidence: 1 }, entities: [] },
    },
    { event: 'action', timestamp: ts(), name: 'action_restart' },
    { event: 'restart', timestamp: ts() },
    { event: 'action', timestamp: ts(), name: 'action_session_start' },
    { event: 'session_started', timestamp: ts() },
    { event: 'action', timestamp: ts(), name: 'action_listen' },
    {
      event: 'user',
      timestamp: ts(),
      text: 'hi again',
      parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
    },
  ];
}

function failure(status: number, reason: string) {
  return expect.objectContaining({ version: '1.0.0', status: 'failure', reason, code: status });
}

describe('tracker routes (operations 3–7, 11)', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    t = await startTestApp();
    http = request(t.url);
  });
  afterAll(() => t.close());

  describe('server information', () => {
    it('GET / greets in plain text without auth', async () => {
      const res = await http.get('/').expect(200);
      expect(res.type).toBe('text/plain');
      expect(res.text).toMatch(/^Hello from Parley: \d+\.\d+\.\d+/);
    });

    it('GET /version names the version and the oldest loadable model version', async () => {
      const res = await http.get('/version').expect(200);
      expect(res.body).toEqual({
        version: expect.any(String),
        minimum_compatible_version: expect.any(String),
      });
    });

    it('GET /status reports the loaded model', async () => {
      const res = await http.get('/status').expect(200);
      expect(res.body).toEqual({
        model_file: '20261121-101500-brisk-crab.tar.gz',
        model_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        num_active_training_jobs: 0,
      });
    });

    it('gives every response a request id, echoing a sane one the caller sent', async () => {
      const own = await http.get('/version').expect(200);
      expect(own.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const echoed = await http.get('/version').set('x-request-id', 'trace-42.a').expect(200);
      expect(echoed.headers['x-request-id']).toBe('trace-42.a');
      const refused = await http
        .get('/version')
        .set('x-request-id', 'bad id\twith space')
        .expect(200);
      expect(refused.headers['x-request-id']).not.toBe('bad id\twith space');
    });

    it('health endpoints answer for operators', async () => {
      await http.get('/health/live').expect(200);
      const ready = await http.get('/health/ready').expect(200);
      expect(ready.body.info.database.status).toBe('up');
    });
  });

  describe('GET tracker', () => {
    it('gives an unknown conversation a fresh session that is not stored', async () => {
      const id = uniqueId('madeup');
      const res = await http.get(`/conversations/${id}/tracker`).expect(200);
      expect(res.body.sender_id).toBe(id);
      expect(res.body.paused).toBe(false);
      expect(res.body.slots).toEqual({
        name: null,
        city: null,
        cuisine: null,
        requested_slot: null,
        session_started_metadata: null,
      });
      expect(res.body.latest_message).toEqual({
        intent: {},
        entities: [],
        text: null,
        message_id: null,
        metadata: {},
      });
      expect(
        res.body.events.map((e: { event: string; name?: string }) => e.name ?? e.event),
      ).toEqual(['action_session_start', 'session_started', 'action_listen']);
      expect(res.body.events[0].metadata).toEqual({
        model_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        assistant_id: 'test_assistant',
      });
      expect(res.body.latest_action_name).toBe('action_listen');
      expect(Object.keys(res.body)).toEqual([
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
      ]);
      const story = await http.get(`/conversations/${id}/story`).expect(200);
      expect(story.text).toBe(`version: "3.1"\nstories:\n- story: ${id}\n  steps: []\n`);
    });

    it('answers 400 for an unknown include_events value', async () => {
      const res = await http
        .get(`/conversations/${uniqueId()}/tracker?include_events=SOME`)
        .expect(400);
      expect(res.body).toEqual({
        version: '1.0.0',
        status: 'failure',
        message:
          "Invalid parameter value for 'include_events'. Should be one of NONE, APPLIED, AFTER_RESTART, ALL",
        reason: 'BadRequest',
        details: { parameter: 'include_events', in: 'query' },
        help: null,
        code: 400,
      });
    });

    it('filters events by include_events as Rasa does (maintainers’ 14-event case)', async () => {
      const id = uniqueId('verbosity');
      await http
        .put(`/conversations/${id}/tracker/events`)
        .send(fourteenEvents(1_700_000_000))
        .expect(200);
      const get = (v: string) =>
        http.get(`/conversations/${id}/tracker?include_events=${v}`).expect(200);
      expect((await get('ALL')).body.events).toHaveLength(14);
      const after = (await get('AFTER_RESTART')).body.events;
      expect(after.map((e: { event: string }) => e.event)).toEqual([
        'action',
        'session_started',
        'action',
        'user',
      ]);
      const applied = (await get('applied')).body.events;
      expect(
        applied.map((e: { event: string; name?: string; text?: string }) => e.name ?? e.text),
      ).toEqual(['action_listen', 'hi again']);
      const none = (await get('NONE')).body;
      expect(none.events).toBeNull();
      expect(none.latest_message.text).toBe('hi again');
      expect((await http.get(`/conversations/${id}/tracker`).expect(200)).body.events).toHaveLength(
        4,
      );
    });

    it('travels back in time with `until` (inclusive) and ignores an unparsable one', async () => {
      const id = uniqueId('until');
      await http
        .put(`/conversations/${id}/tracker/events`)
        .send(fourteenEvents(1_700_000_000))
        .expect(200);
      const res = await http
        .get(`/conversations/${id}/tracker?include_events=ALL&until=1700000004`)
        .expect(200);
      expect(res.body.events).toHaveLength(4);
      expect(res.body.latest_message.text).toBe('hi');
      expect(res.body.latest_event_time).toBe(1_700_000_004);
      const ignored = await http
        .get(`/conversations/${id}/tracker?include_events=ALL&until=soon`)
        .expect(200);
      expect(ignored.body.events).toHaveLength(14);
    });
  });

  describe('POST events (append)', () => {
    it.each([
      [
        'user',
        {
          event: 'user',
          text: 'hello',
          parse_data: { intent: { name: 'greet', confidence: 0.9 }, entities: [] },
        },
      ],
      [
        'bot with data',
        { event: 'bot', text: 'Hi', data: { buttons: [{ title: 'A', payload: '/a' }] } },
      ],
      ['slot int', { event: 'slot', name: 'name', value: 42 }],
      ['slot str', { event: 'slot', name: 'name', value: 'Sara' }],
      ['slot null', { event: 'slot', name: 'name', value: null }],
      ['slot list', { event: 'slot', name: 'name', value: ['a', 'b'] }],
    ])(
      'appends one %s event after a new session start, stamped with the model',
      async (_kind, event) => {
        const id = uniqueId('append');
        const before = Date.now() / 1000;
        const res = await http
          .post(`/conversations/${id}/tracker/events?include_events=ALL`)
          .send(event)
          .expect(200);
        const events = res.body.events as Record<string, unknown>[];
        expect(events).toHaveLength(4);
        const posted = events[3]!;
        expect(posted).toMatchObject(event);
        expect(posted.metadata).toEqual({
          model_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
          assistant_id: 'test_assistant',
        });
        expect(posted.timestamp as number).toBeGreaterThan(before);
        const stored = await http
          .get(`/conversations/${id}/tracker?include_events=ALL`)
          .expect(200);
        expect(stored.body.events).toEqual(events);
      },
    );

    it('keeps a model_id the client already put in the metadata', async () => {
      const id = uniqueId('keep');
      const res = await http
        .post(`/conversations/${id}/tracker/events?include_events=ALL`)
        .send({ event: 'slot', name: 'name', value: 'x', metadata: { model_id: 'client-model' } })
        .expect(200);
      expect(res.body.events[3].metadata.model_id).toBe('client-model');
    });

    it('appends a list after the stored events and keeps the existing ones', async () => {
      const id = uniqueId('list');
      await http
        .post(`/conversations/${id}/tracker/events`)
        .send({ event: 'slot', name: 'city', value: 'Berlin' })
        .expect(200);
      const res = await http
        .post(`/conversations/${id}/tracker/events?include_events=ALL`)
        .send([{ event: 'slot', name: 'name', value: 'Ana' }, { event: 'pause' }])
        .expect(200);
      expect(res.body.events.map((e: { event: string }) => e.event)).toEqual([
        'action',
        'session_started',
        'action',
        'slot',
        'slot',
        'pause',
      ]);
      expect(res.body.slots).toMatchObject({ city: 'Berlin', name: 'Ana' });
      expect(res.body.paused).toBe(true);
    });

    it('does not add a second session start when the posted list begins with one', async () => {
      const id = uniqueId('triple');
      const triple = [
        {
          event: 'action',
          timestamp: 1_700_000_001,
          metadata: { model_id: 'm' },
          name: 'action_session_start',
          policy: null,
          confidence: 1,
          action_text: null,
          hide_rule_turn: false,
        },
        { event: 'session_started', timestamp: 1_700_000_002, metadata: { model_id: 'm' } },
        {
          event: 'action',
          timestamp: 1_700_000_003,
          metadata: { model_id: 'm' },
          name: 'action_listen',
          policy: null,
          confidence: null,
          action_text: null,
          hide_rule_turn: false,
        },
      ];
      const res = await http
        .post(`/conversations/${id}/tracker/events?include_events=ALL`)
        .send(triple)
        .expect(200);
      expect(res.body.events).toHaveLength(3);
      expect(res.body.events.map((e: { timestamp: number }) => e.timestamp)).toEqual([
        1_700_000_001, 1_700_000_002, 1_700_000_003,
      ]);
    });

    it.each([
      ['an unknown event kind', { event: 'teleport' }],
      ['a slot event without a name', { event: 'slot', value: 1 }],
      ['an event without a kind', { text: 'hi' }],
      [
        'a user event whose intent is not an object',
        { event: 'user', text: 'x', parse_data: { intent: 'greet' } },
      ],
      ['an entities event without entities', { event: 'entities' }],
    ])('refuses %s with 400 and stores nothing', async (_what, event) => {
      const id = uniqueId('bad');
      const res = await http
        .post(`/conversations/${id}/tracker/events`)
        .send(event as object)
        .expect(400);
      expect(res.body).toEqual(failure(400, 'BadRequest'));
      expect(res.body.message).toMatch(
        /^Failed to validate the events format\. For more information about the format visit the docs\. Error: /,
      );
      const after = await http.get(`/conversations/${id}/tracker?include_events=ALL`).expect(200);
      expect(after.body.events).toHaveLength(3);
      await http.delete(`/conversations/${id}/tracker`).expect(404);
    });

    it('refuses a missing body with 400', async () => {
      const res = await http.post(`/conversations/${uniqueId()}/tracker/events`).expect(400);
      expect(res.body).toEqual(failure(400, 'BadRequest'));
    });

    it('checks the body before include_events', async () => {
      const res = await http
        .post(`/conversations/${uniqueId()}/tracker/events?include_events=BAD`)
        .send({ event: 'nope' })
        .expect(400);
      expect(res.body.message).toMatch(/events format/);
      const res2 = await http
        .post(`/conversations/${uniqueId()}/tracker/events?include_events=BAD`)
        .send({ event: 'pause' })
        .expect(400);
      expect(res2.body.details).toEqual({ parameter: 'include_events', in: 'query' });
    });
  });

  describe('odd conversation ids', () => {
    it.each([
      ['slashes and symbols', `abc/+-_=def-${Date.now()}`],
      ['a backslash', `back\\slash-${Date.now()}`],
      ['unicode and spaces', `Grüße an alle 👋 ${Date.now()}`],
      ['a trailing word like a route', `x/tracker-${Date.now()}`],
    ])('works with %s', async (_what, id) => {
      const path = `/conversations/${id.split('/').map(encodeURIComponent).join('/')}`;
      await http
        .post(`${path}/tracker/events`)
        .send({ event: 'slot', name: 'name', value: 'v' })
        .expect(200);
      const res = await http.get(`${path}/tracker?include_events=ALL`).expect(200);
      expect(res.body.sender_id).toBe(id);
      expect(res.body.events).toHaveLength(4);
      const story = await http.get(`${path}/story`).expect(200);
      expect(story.text).toContain('- story: ');
      await http.delete(`${path}/tracker`).expect(204);
    });
  });

  describe('PUT events (replace)', () => {
    it('replaces the stored events with exactly the posted list', async () => {
      const id = uniqueId('replace');
      await http
        .post(`/conversations/${id}/tracker/events`)
        .send([{ event: 'slot', name: 'name', value: 'old' }, { event: 'pause' }])
        .expect(200);
      const events = [
        { event: 'action', timestamp: 1_700_000_001, name: 'action_listen' },
        {
          event: 'user',
          timestamp: 1_700_000_002,
          text: 'hello',
          parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
        },
      ];
      const res = await http
        .put(`/conversations/${id}/tracker/events?include_events=ALL`)
        .send(events)
        .expect(200);
      expect(res.body.sender_id).toBe(id);
      expect(res.body.events).toHaveLength(2);
      expect(res.body.paused).toBe(false);
      const stored = await http.get(`/conversations/${id}/tracker?include_events=ALL`).expect(200);
      expect(stored.body.events).toEqual(res.body.events);
      expect(stored.body.slots.name).toBeNull();
    });

    it.each([
      ['no body', undefined],
      ['a single object', { event: 'pause' }],
      ['an invalid event', [{ event: 'slot' }]],
    ])('refuses %s with 400 and keeps what was stored', async (_what, body) => {
      const id = uniqueId('put-bad');
      await http
        .post(`/conversations/${id}/tracker/events`)
        .send({ event: 'slot', name: 'name', value: 'kept' })
        .expect(200);
      const req = http.put(`/conversations/${id}/tracker/events`);
      const res = await (body === undefined ? req : req.send(body as object)).expect(400);
      expect(res.body).toEqual(failure(400, 'BadRequest'));
      const stored = await http.get(`/conversations/${id}/tracker`).expect(200);
      expect(stored.body.slots.name).toBe('kept');
    });
  });

  describe('DELETE tracker', () => {
    it('deletes a stored conversation with 204, then 404', async () => {
      const id = uniqueId('delete');
      await http
        .post(`/conversations/${id}/tracker/events`)
        .send({ event: 'slot', name: 'name', value: 'x' })
        .expect(200);
      const res = await http.delete(`/conversations/${id}/tracker`).expect(204);
      expect(res.text).toBe('');
      const again = await http.delete(`/conversations/${id}/tracker`).expect(404);
      expect(again.body).toEqual(failure(404, 'Not found'));
      expect(again.body.message).toBe('Conversation ID not found.');
      const fresh = await http.get(`/conversations/${id}/tracker?include_events=ALL`).expect(200);
      expect(fresh.body.events).toHaveLength(3);
      expect(fresh.body.slots.name).toBeNull();
    });
  });

  describe('GET story', () => {
    it('exports the latest session, all sessions, and time-travelled sessions', async () => {
      const id = uniqueId('story');
      await http
        .put(`/conversations/${id}/tracker/events`)
        .send([
          ...fourteenEvents(1_700_000_000),
          { event: 'slot', timestamp: 1_700_000_020, name: 'name', value: 'Sara' },
        ])
        .expect(200);
      const latest = await http.get(`/conversations/${id}/story`).expect(200);
      expect(latest.type).toBe('text/plain');
      expect(latest.text).toBe(
        [
          'version: "3.1"',
          'stories:',
          `- story: ${id}`,
          '  steps:',
          '  - intent: greet',
          '    user: |-',
          '      hi again',
          '  - slot_was_set:',
          '    - name: Sara',
          '',
        ].join('\n'),
      );
      const all = await http.get(`/conversations/${id}/story?all_sessions=true`).expect(200);
      expect(all.text).toContain(`- story: ${id}, story 1`);
      expect(all.text).toContain(`- story: ${id}, story 2`);
      expect(all.text).toContain(
        '  - intent: restart\n    user: |-\n      /restart\n  - action: action_restart',
      );
      const early = await http
        .get(`/conversations/${id}/story?all_sessions=true&until=1700000005`)
        .expect(200);
      expect(early.text).toContain(`- story: ${id}\n`);
      expect(early.text).not.toContain('story 2');
      expect(early.text).toContain('  - action: utter_greet');
    });
  });

  describe('GET story on an expired session', () => {
    it('does not start a new session (Rasa maintainers’ case)', async () => {
      const id = uniqueId('expired');
      const old = 1_600_000_000;
      await http
        .put(`/conversations/${id}/tracker/events`)
        .send(fourteenEvents(old).slice(0, 7))
        .expect(200);
      const story = await http.get(`/conversations/${id}/story?all_sessions=true`).expect(200);
      expect(story.text).toContain(`- story: ${id}\n`);
      expect(story.text).not.toContain('story 2');
      const after = await http.get(`/conversations/${id}/tracker?include_events=ALL`).expect(200);
      expect(after.body.events).toHaveLength(7);
    });
  });

  describe('POST messages (operation 11)', () => {
    it('logs the user message and the slots its entities fill, without predicting', async () => {
      const id = uniqueId('msg');
      const start = await http.get(`/conversations/${id}/tracker?include_events=ALL`).expect(200);
      expect(start.body.events).toHaveLength(3);
      await http
        .post(`/conversations/${id}/tracker/events`)
        .send({ event: 'action', name: 'action_listen' })
        .expect(200);
      const res = await http
        .post(`/conversations/${id}/messages?include_events=ALL`)
        .send({
          text: 'my name is Sara',
          sender: 'user',
          parse_data: {
            intent: { name: 'inform', confidence: 0.97 },
            entities: [{ entity: 'name', value: 'Sara', start: 11, end: 15 }],
          },
        })
        .expect(200);
      const events = res.body.events as Array<Record<string, unknown>>;
      expect(events.slice(-2).map((e) => e.event)).toEqual(['user', 'slot']);
      expect(events).toHaveLength(6);
      expect(events[5]).toMatchObject({ event: 'slot', name: 'name', value: 'Sara' });
      expect(res.body.latest_message.text).toBe('my name is Sara');
      expect(res.body.latest_message.intent).toEqual({ name: 'inform', confidence: 0.97 });
      expect(res.body.slots.name).toBe('Sara');
    });

    it('parses the /intent{…} shortcut when no parse_data is given', async () => {
      const id = uniqueId('msg-regex');
      const res = await http
        .post(`/conversations/${id}/messages`)
        .send({ text: '/inform{"city": "Lisbon"}', sender: 'user' })
        .expect(200);
      expect(res.body.latest_message.intent).toEqual({ name: 'inform', confidence: 1 });
      expect(res.body.slots.city).toBe('Lisbon');
    });

    it.each([
      ['an empty body', undefined, /^No message defined in request body/],
      [
        'a bot sender',
        { text: 'hi', sender: 'bot' },
        /Messages of sender 'bot' cannot be handled\.$/,
      ],
      ['a text that is not a string', { text: 5, sender: 'user' }, /text/],
      [
        'parse_data that is not an object',
        { text: 'hi', sender: 'user', parse_data: 'greet' },
        /parse_data/,
      ],
      [
        'parse_data with a bad intent',
        { text: 'hi', sender: 'user', parse_data: { intent: 3 } },
        /events format/,
      ],
    ])('refuses %s with 400', async (_what, body, message) => {
      const req = http.post(`/conversations/${uniqueId()}/messages`);
      const res = await (body === undefined ? req : req.send(body as object)).expect(400);
      expect(res.body).toEqual(failure(400, 'BadRequest'));
      expect(res.body.message).toMatch(message);
    });
  });

  describe('transport errors', () => {
    it('answers malformed JSON with a 400 failure body', async () => {
      const res = await http
        .post(`/conversations/${uniqueId()}/tracker/events`)
        .set('Content-Type', 'application/json')
        .send('{"event": "slot", ')
        .expect(400);
      expect(res.body).toEqual(failure(400, 'BadRequest'));
      expect(res.text).not.toMatch(/at \w+ \(/);
    });

    it('accepts JSON sent without a JSON content type, as curl -d does', async () => {
      const res = await http
        .post(`/conversations/${uniqueId()}/tracker/events`)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('{"event": "pause"}')
        .expect(200);
      expect(res.body.paused).toBe(true);
    });

    it('answers an unknown route with 404 and a wrong method with 405', async () => {
      const missing = await http.get('/no/such/route').expect(404);
      expect(missing.body).toEqual(failure(404, 'NotFound'));
      const wrong = await http.patch(`/conversations/${uniqueId()}/tracker`).expect(405);
      expect(wrong.body).toEqual(failure(405, 'MethodNotAllowed'));
      expect(wrong.headers.allow).toContain('GET');
      expect(wrong.headers.allow).toContain('DELETE');
    });

    it('answers an over-large body with 413', async () => {
      const big = JSON.stringify([{ event: 'bot', text: 'x'.repeat(21 * 1024 * 1024) }]);
      const res = await http
        .post(`/conversations/${uniqueId()}/tracker/events`)
        .set('Content-Type', 'application/json')
        .send(big)
        .expect(413);
      expect(res.body).toEqual(failure(413, 'PayloadTooLarge'));
    });
  });

  describe('without a loaded model', () => {
    it('answers 409 Conflict on model-dependent routes and keeps serving the rest', async () => {
      const loaded = t.registry.current();
      t.registry.unload();
      try {
        const res = await http.get(`/conversations/${uniqueId()}/tracker`).expect(409);
        expect(res.body).toEqual({
          version: '1.0.0',
          status: 'failure',
          message:
            'No agent loaded. To continue processing, a model of a trained agent needs to be loaded.',
          reason: 'Conflict',
          details: {},
          help: null,
          code: 409,
        });
        await http.get('/status').expect(409);
        await http
          .post(`/conversations/${uniqueId()}/tracker/events`)
          .send({ event: 'pause' })
          .expect(409);
        await http.get('/').expect(200);
      } finally {
        if (loaded) t.registry.load(loaded);
      }
    });

    it('answers 409 before it reads the request, as Rasa does (bad bodies and parameters too)', async () => {
      const loaded = t.registry.current();
      t.registry.unload();
      try {
        const id = uniqueId();
        const attempts = [
          http.post(`/conversations/${id}/tracker/events?include_events=BAD`).send({ event: 1 }),
          http.put(`/conversations/${id}/tracker/events`).send({ not: 'a list' }),
          http.post(`/conversations/${id}/messages`).send({}),
          http.post(`/conversations/${id}/trigger_intent`).send({ name: '' }),
          http.post(`/conversations/${id}/execute`).send([]),
          http.post(`/conversations/${id}/predict`),
          http.get(`/conversations/${id}/story?until=x`),
          http.delete(`/conversations/${id}/tracker`),
          http.post('/model/parse?emulation_mode=nope').send({}),
        ];
        for (const res of await Promise.all(attempts)) {
          expect([res.status, res.body.reason]).toEqual([409, 'Conflict']);
        }
      } finally {
        if (loaded) t.registry.load(loaded);
      }
    });
  });
});
