import { PlatformClient } from 'src/modules/channels/connector/platform-client';
import { type FakePlatform, startFakePlatform } from 'test/utils/fake-platform';
import { startHttpProxy, type TestHttpProxy } from 'test/utils/http-proxy';

/**
 * A connector's `proxy` setting: every call of its platform client goes through that HTTP
 * proxy (a real one on loopback), with the proxy's credentials when the URL holds them.
 */
describe('PlatformClient through an HTTP proxy', () => {
  let api: FakePlatform;
  let open: TestHttpProxy;
  let guarded: TestHttpProxy;

  beforeAll(async () => {
    api = await startFakePlatform(() => ({ body: { ok: true } }));
    open = await startHttpProxy();
    guarded = await startHttpProxy('bot:s3cret');
  });

  afterAll(async () => {
    await api?.close();
    await open?.close();
    await guarded?.close();
  });

  const host = (): string => new URL(api.url).host;

  it('sends each call through the proxy to the platform', async () => {
    const client = new PlatformClient({
      name: 't',
      baseUrl: `${api.url}/api`,
      timeoutMs: 5000,
      proxy: open.url,
    });
    const before = api.calls.length;
    const answer = await client.call({ path: '/chat.postMessage', json: { text: 'hi' } });
    expect(answer).toEqual({ ok: true, status: 200, body: { ok: true } });
    expect(api.calls.slice(before)).toEqual([
      expect.objectContaining({ path: '/api/chat.postMessage', body: { text: 'hi' } }),
    ]);
    expect(open.requests.map((r) => r.target)).toEqual(
      expect.arrayContaining([expect.stringContaining(host())]),
    );
  });

  it('authenticates to the proxy with the credentials of its URL', async () => {
    const client = new PlatformClient({
      name: 't',
      baseUrl: api.url,
      timeoutMs: 5000,
      proxy: guarded.url.replace('http://', 'http://bot:s3cret@'),
    });
    const before = api.calls.length;
    expect((await client.call({ path: '/m', json: {} })).ok).toBe(true);
    expect(api.calls).toHaveLength(before + 1);
    expect(guarded.requests.at(-1)?.authorization).toBe(
      `Basic ${Buffer.from('bot:s3cret').toString('base64')}`,
    );
  });

  it('reports a proxy that refuses the call as a failed call, reaching nothing', async () => {
    const client = new PlatformClient({
      name: 't',
      baseUrl: api.url,
      timeoutMs: 5000,
      proxy: guarded.url,
    });
    const before = api.calls.length;
    const answer = await client.call({ path: '/m', json: {} });
    expect(answer.ok).toBe(false);
    expect(api.calls).toHaveLength(before);
  });

  it('calls the platform directly without a proxy', async () => {
    const client = new PlatformClient({ name: 't', baseUrl: api.url, timeoutMs: 5000 });
    const seen = open.requests.length;
    expect((await client.call({ path: '/direct', json: {} })).ok).toBe(true);
    expect(open.requests).toHaveLength(seen);
  });
});
