import request from 'supertest';
import { expectMatchesOpenApi } from 'test/compat/openapi';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

const TRACKER = '/conversations/{conversation_id}/tracker';
const EVENTS = '/conversations/{conversation_id}/tracker/events';

/**
 * Parley's answers on the documented routes, checked against Rasa's published OpenAPI document
 * (with the corrections in test/compat/openapi.ts). The behaviour itself is tested in
 * test/e2e/tracker.e2e-spec.ts; here only the shapes are held against Rasa's document.
 */
describe("responses match Rasa's OpenAPI document", () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    t = await startTestApp();
    http = request(t.url);
  });
  afterAll(() => t.close());

  it('GET /version and GET /status', async () => {
    expectMatchesOpenApi('get', '/version', 200, (await http.get('/version').expect(200)).body);
    expectMatchesOpenApi('get', '/status', 200, (await http.get('/status').expect(200)).body);
  });

  it('GET tracker of a new conversation, with all events and with none', async () => {
    const id = uniqueId('oa-new');
    const all = await http.get(`/conversations/${id}/tracker?include_events=ALL`).expect(200);
    expect(all.body.events).toHaveLength(3);
    expectMatchesOpenApi('get', TRACKER, 200, all.body);
    const none = await http.get(`/conversations/${id}/tracker?include_events=NONE`).expect(200);
    expect(none.body.events).toBeNull();
    expectMatchesOpenApi('get', TRACKER, 200, none.body);
  });

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
    ['slot list', { event: 'slot', name: 'name', value: ['a', 'b'] }],
    ['restart', { event: 'restart' }],
  ])('POST events (%s)', async (_kind, event) => {
    const id = uniqueId('oa-append');
    const res = await http
      .post(`/conversations/${id}/tracker/events?include_events=ALL`)
      .send(event)
      .expect(200);
    expectMatchesOpenApi('post', EVENTS, 200, res.body);
  });

  it('PUT events', async () => {
    const id = uniqueId('oa-replace');
    const res = await http
      .put(`/conversations/${id}/tracker/events?include_events=ALL`)
      .send([
        { event: 'action', timestamp: 1_700_000_001, name: 'action_listen' },
        {
          event: 'user',
          timestamp: 1_700_000_002,
          text: 'hello',
          parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
        },
      ])
      .expect(200);
    expect(res.body.events).toHaveLength(2);
    expectMatchesOpenApi('put', EVENTS, 200, res.body);
  });

  it('POST messages', async () => {
    const id = uniqueId('oa-msg');
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
    expect(res.body.slots.name).toBe('Sara');
    expectMatchesOpenApi('get', TRACKER, 200, res.body);
  });
});
