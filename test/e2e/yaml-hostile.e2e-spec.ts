import request from 'supertest';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';

const VALID = `version: "3.1"
intents:
  - greet
responses:
  utter_greet:
    - text: Hello!
nlu:
  - intent: greet
    examples: |
      - hi
      - hello
`;

function expectYaml400(res: request.Response, message: RegExp): void {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ version: '1.0.0', status: 'failure', code: 400 });
  expect(typeof res.body.reason).toBe('string');
  expect(res.body.message).toMatch(message);
  expect(JSON.stringify(res.body)).not.toMatch(/ at .*\.(js|ts):\d+/);
}

/**
 * Hostile YAML on the route that reads YAML from the network: every shape is a 400 failure body
 * naming the problem, and the server answers the next request.
 */
describe('POST /model/train with hostile YAML', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const train = (yaml: string) =>
    request(t.url).post('/model/train').set('Content-Type', 'application/x-yaml').send(yaml);

  afterEach(async () => {
    await request(t.url).get('/health/live').expect(200);
  });

  it('an alias bomb (billion laughs)', async () => {
    const bomb = [
      'version: "3.1"',
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
      'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
      'nlu: [*g]',
    ].join('\n');
    expectYaml400(await train(bomb), /alias/i);
  });

  it('duplicate keys', async () => {
    expectYaml400(
      await train(
        VALID.replace('intents:\n  - greet\n', 'intents:\n  - greet\nintents:\n  - bye\n'),
      ),
      /duplicate|unique/i,
    );
  });

  it('YAML 1.1 merge keys', async () => {
    const merged = VALID.replace(
      'responses:\n  utter_greet:\n    - text: Hello!\n',
      'responses:\n  utter_greet:\n    - &hello\n      text: Hello!\n    - <<: *hello\n      image: https://example.com/a.png\n',
    );
    expectYaml400(await train(merged), /merge|<</i);
  });

  it('deep nesting, block and flow style', async () => {
    const flow = `version: "3.1"\nnlu: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`;
    expectYaml400(await train(flow), /nest|deep|depth/i);
    let block = 'version: "3.1"\nnlu:\n';
    for (let i = 1; i <= 200; i++) block += `${'  '.repeat(i)}k${i}:\n`;
    expectYaml400(await train(block), /nest|deep|depth/i);
  });

  it('a document over the size cap', async () => {
    const big = `${VALID}# ${'x'.repeat(20 * 1024 * 1024)}\n`;
    expectYaml400(await train(big), /larger than the limit/);
  });

  it('the valid document these are built from is not refused for its YAML', async () => {
    const res = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(VALID);
    expect(res.status).toBe(200);
  });
});
