import { startTestApp, type TestApp } from 'test/utils/create-test-app';

/** `METHOD /path` of every route, in the order Express tries them. */
function routeOrder(t: TestApp): string[] {
  const express = t.app.getHttpAdapter().getInstance();
  const stack = (
    express.router as unknown as {
      stack: { route?: { path: string; methods: Record<string, boolean> } }[];
    }
  ).stack;
  return stack.flatMap(({ route }) =>
    route === undefined
      ? []
      : Object.keys(route.methods).map((method) => `${method.toUpperCase()} ${route.path}`),
  );
}

// The model routes are ModelHttpModule's, placed by the app module; ModelModule itself (imported
// early, by the dialogue module) must not pull them ahead of the message and tracker routes.
describe('model route order', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { PARLEY_SERVE_MODELS: 'true' }, withDomain: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('registers the model routes after the REST webhook, server info and tracker routes', () => {
    const routes = routeOrder(t);
    const at = (route: string): number => {
      const index = routes.indexOf(route);
      expect(index).toBeGreaterThanOrEqual(0);
      return index;
    };
    const firstModelRoute = Math.min(
      ...[
        'POST /model/parse',
        'PUT /model',
        'DELETE /model',
        'GET /domain',
        'GET /flows',
        'GET /license',
        'POST /model/test/intents',
        'POST /model/train',
        'GET /models/:name',
      ].map(at),
    );
    expect(at('POST /webhooks/rest/webhook')).toBeLessThan(firstModelRoute);
    expect(at('GET /status')).toBeLessThan(firstModelRoute);
    expect(at('GET /conversations/*conversationId/tracker')).toBeLessThan(firstModelRoute);
    expect(at('POST /model/parse')).toBeLessThan(at('GET /models/:name'));
  });
});
