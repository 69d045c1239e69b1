import { type NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from 'src/app.module';
import { configureApp } from 'src/bootstrap/configure-app';
import { Domain, readStoryFiles, Tracer, trainDialogue } from 'src/core';
import { ServedModel } from 'src/modules/model';
import { createOtelTracer } from 'src/modules/observability';
import request from 'supertest';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { testConfig, uniqueId } from 'test/utils/create-test-app';
import {
  AMQP_URL,
  consumeQueue,
  rabbitReachable,
  uniqueName,
  type QueueConsumer,
} from 'test/utils/rabbitmq';

const DOMAIN = `
version: "3.1"
intents: [greet]
actions: [action_lookup]
responses:
  utter_greet:
    - text: Hello!
`;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';

/**
 * Tracing with endpoints.yml's `tracing:`: the app's tracer is swapped for one exporting to an
 * in-memory exporter; one request over the REST channel and one executed custom action give one
 * trace each, continuing the caller's `traceparent`. With RabbitMQ reachable, the event broker
 * (`pika`) is on too: the relay's publish of a turn's events links back to the turn's write.
 */
describe('OpenTelemetry tracing of turns', () => {
  let dir: string;
  let actions: TestActionServer;
  let app: NestExpressApplication;
  let url: string;
  let broker = false;
  let consumer: QueueConsumer | undefined;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-tracing-'));
    actions = await startActionServer({ action_lookup: () => ran([]) });
    broker = await rabbitReachable('tracing of the outbox relay');
    let brokerYaml = '';
    if (broker) {
      const exchange = uniqueName('parley-tracing-x');
      const queue = uniqueName('parley-tracing-q');
      consumer = await consumeQueue(queue, exchange);
      brokerYaml = `event_broker:\n  type: pika\n  url: ${AMQP_URL}\n  exchange_name: ${exchange}\n  queues:\n    - ${queue}\n`;
    }
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      `action_endpoint:\n  url: "${actions.url}"\ntracing:\n  type: otlp\n  endpoint: 127.0.0.1:1\n  insecure: true\n  service_name: parley-test\n${brokerYaml}`,
    );
    const config = testConfig({ PARLEY_ENDPOINTS: endpoints });
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.forRoot(config, process.env.DATABASE_URL as string)],
    })
      .overrideProvider(Tracer)
      .useValue(
        createOtelTracer(
          {
            url: 'http://127.0.0.1:1/v1/traces',
            serviceName: 'parley-test',
            rootCertificates: null,
          },
          [new SimpleSpanProcessor(exporter)],
        ),
      )
      .compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false });
    configureApp(app, config);
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    // With a policy, so a turn predicts.
    const domain = Domain.fromYaml(DOMAIN, 'domain.yml');
    const rules =
      'version: "3.1"\nrules:\n- rule: greet\n  steps:\n  - intent: greet\n  - action: utter_greet\n';
    const { ensemble } = trainDialogue(
      readStoryFiles([{ text: rules, file: 'rules.yml' }]).blocks,
      domain,
      [{ name: 'RulePolicy' }],
    );
    app.get(ServedModel).load({
      domain,
      policies: ensemble,
      modelId: 'feedc0defeedc0defeedc0defeedc0de',
      modelFile: null,
      assistantId: 'tracing_assistant',
    });
  });

  afterAll(async () => {
    await app?.close();
    await consumer?.close();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => exporter.reset());

  const spansOf = (traceId: string) =>
    exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);

  it('continues the caller’s traceparent through the channel, lock, store and turn', async () => {
    await request(url)
      .post('/webhooks/rest/webhook')
      .set('traceparent', `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`)
      .send({ sender: uniqueId('trace'), message: '/greet' })
      .expect(200);
    const spans = spansOf(TRACE_ID);
    const byName = new Map(spans.map((s) => [s.name, s]));
    const channel = byName.get('POST /webhooks/rest/webhook');
    expect(channel).toBeDefined();
    expect(channel!.parentSpanContext?.spanId).toBe(PARENT_SPAN_ID);
    expect(channel!.attributes['http.route']).toBe('/webhooks/rest/webhook');
    const turn = byName.get('parley.turn');
    expect(turn?.parentSpanContext?.spanId).toBe(channel!.spanContext().spanId);
    expect(turn?.attributes['parley.channel']).toBe('rest');
    const turnId = turn!.spanContext().spanId;
    for (const name of [
      'parley.lock.acquire',
      'parley.tracker_store.retrieveVersioned',
      'parley.policy.predict',
      'parley.tracker_store.appendIfUnchanged',
    ]) {
      expect(byName.get(name)?.parentSpanContext?.spanId).toBe(turnId);
    }
  });

  it('links the outbox relay’s publish of a turn’s events to the turn’s write', async () => {
    if (!broker) return; // rabbitReachable printed why
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await request(url)
      .post('/webhooks/rest/webhook')
      .set('traceparent', `00-${traceId}-b7ad6b7169203331-01`)
      .send({ sender: uniqueId('trace-outbox'), message: '/greet' })
      .expect(200);
    const write = spansOf(traceId).find((s) => s.name === 'parley.tracker_store.appendIfUnchanged');
    expect(write).toBeDefined();
    const writeId = write!.spanContext().spanId;
    const linked = () =>
      exporter
        .getFinishedSpans()
        .find(
          (s) =>
            s.name === 'parley.outbox.publish' &&
            s.links.some((l) => l.context.traceId === traceId && l.context.spanId === writeId),
        );
    // The relay publishes after the commit, in its own trace: wait for its span.
    for (let i = 0; i < 200 && linked() === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const publish = linked();
    expect(publish).toBeDefined();
    expect(publish!.spanContext().traceId).not.toBe(traceId);
    expect(publish!.attributes['parley.outbox.events']).toBeGreaterThan(0);
  });

  it('traces a custom action: prediction-free execute → action run → action server call', async () => {
    const id = uniqueId('trace');
    await request(url)
      .post('/webhooks/rest/webhook')
      .send({ sender: id, message: '/greet' })
      .expect(200);
    exporter.reset();
    await request(url)
      .post(`/conversations/${id}/execute`)
      .send({ name: 'action_lookup' })
      .expect(200);
    const spans = exporter.getFinishedSpans();
    const channel = spans.find((s) => s.name === 'POST /conversations/*conversationId/execute');
    expect(channel).toBeDefined();
    const traceId = channel!.spanContext().traceId;
    const inTrace = spansOf(traceId);
    const byName = new Map(inTrace.map((s) => [s.name, s]));
    const run = byName.get('parley.action.run');
    expect(run?.attributes['parley.action']).toBe('action_lookup');
    const call = byName.get('parley.action_server.call');
    expect(call?.parentSpanContext?.spanId).toBe(run!.spanContext().spanId);
    expect(byName.get('parley.turn')?.attributes['parley.channel']).toBe('api');
    // Without a traceparent the request starts a new trace.
    expect(channel!.parentSpanContext).toBeUndefined();
  });
});
