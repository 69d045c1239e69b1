import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { CallbackOutputChannel } from './callback.output-channel';

describe('CallbackOutputChannel', () => {
  let server: Server;
  let url: string;
  let status = 200;
  const received: Array<{ url: string; headers: IncomingHttpHeaders; body: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let data = '';
      req.on('data', (c: Buffer) => (data += c.toString()));
      req.on('end', () => {
        received.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(data) });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
    status = 200;
  });

  it('POSTs each dispatched message in order, with params, headers and basic auth', async () => {
    const out = new CallbackOutputChannel({
      url,
      headers: { 'x-bot': 'mood' },
      params: { token: 't0k' },
      basicAuth: { username: 'ann', password: 'pw' },
      timeoutMs: 5000,
    });
    await out.sendResponse('u1', { text: 'Hi!\n\nHow are you?', image: 'https://x/y.png' });
    expect(received.map((r) => r.body)).toEqual([
      { recipient_id: 'u1', text: 'Hi!' },
      { recipient_id: 'u1', text: 'How are you?' },
      { recipient_id: 'u1', image: 'https://x/y.png' },
    ]);
    expect(received[0]?.url).toBe('/hook?token=t0k');
    expect(received[0]?.headers['x-bot']).toBe('mood');
    expect(received[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('ann:pw').toString('base64')}`,
    );
    // Collected as well, like Rasa's CallbackOutput (a CollectingOutputChannel).
    expect(out.messages).toHaveLength(3);
  });

  it('keeps going when the callback answers an error or cannot be reached', async () => {
    status = 503;
    const failing = new CallbackOutputChannel({
      url,
      headers: {},
      params: {},
      basicAuth: null,
      timeoutMs: 5000,
    });
    await expect(failing.sendResponse('u2', { text: 'a' })).resolves.toBeUndefined();
    expect(received).toHaveLength(1);
    const unreachable = new CallbackOutputChannel({
      url: 'http://127.0.0.1:9/none',
      headers: {},
      params: {},
      basicAuth: null,
      timeoutMs: 5000,
    });
    await expect(unreachable.sendResponse('u3', { text: 'b' })).resolves.toBeUndefined();
    expect(unreachable.messages).toEqual([{ recipient_id: 'u3', text: 'b' }]);
  });
});
