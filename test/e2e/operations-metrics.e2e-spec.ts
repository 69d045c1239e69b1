import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Domain } from 'src/core';
import request from 'supertest';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { startFakeKafka, type FakeKafka } from 'test/utils/fake-kafka';

/** The value of one sample of a Prometheus text exposition (labels matched exactly, any order). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      found[pair[1] as string] = pair[2] as string;
    }
    const wanted = Object.entries(labels);
    if (wanted.length !== Object.keys(found).length) continue;
    if (wanted.every(([k, v]) => found[k] === v)) return Number(m[4]);
  }
  return null;
}

/** The sum of every sample of a metric, whatever its labels. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (m !== null && m[1] === name) sum += Number(m[3]);
  }
  return sum;
}

/** The action server as the metrics name it: its URL without query or credentials. */
function actionTarget(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

const DOMAIN = `
version: "3.1"
intents: [greet, check]
actions: [action_check_balance]
responses:
  utter_greet:
    - text: Hello!
`;

describe('GET /metrics after a conversation over HTTP', () => {
  let dir: string;
  let actions: TestActionServer;
  let kafka: FakeKafka;
  let t: TestApp;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-metrics-'));
    kafka = await startFakeKafka();
    actions = await startActionServer({
      action_check_balance: () => ran([{ event: 'slot', name: 'balance', value: 42 }]),
    });
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      `action_endpoint:\n  url: "${actions.url}"\n` +
        `event_broker:\n  type: kafka\n  url: ${kafka.address}\n  topic: ${uniqueId('metrics')}\n`,
    );
    t = await startTestApp({ env: { PARLEY_ENDPOINTS: endpoints }, withDomain: false });
    t.registry.load({
      domain: Domain.fromYaml(DOMAIN, 'domain.yml'),
      modelId: 'f00dfeedf00dfeedf00dfeedf00dfeed',
      modelFile: null,
      assistantId: 'metrics_assistant',
    });
  });

  afterAll(async () => {
    await t?.close();
    await actions?.close();
    await kafka?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async (): Promise<string> => {
    const res = await request(t.url).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
    return res.text;
  };

  it('names every operations metric and moves the counters of the turns it served', async () => {
    const before = await scrape();
    const turnsBefore = sample(before, 'parley_turns_total', {
      channel: 'rest',
      outcome: 'success',
    });
    const id = uniqueId('metrics');

    // A scripted conversation: two messages over the REST channel, then a custom action.
    for (const message of ['/greet', '/check']) {
      await request(t.url).post('/webhooks/rest/webhook').send({ sender: id, message }).expect(200);
    }
    await request(t.url)
      .post(`/conversations/${id}/execute`)
      .send({ name: 'action_check_balance' })
      .expect(200);
    await request(t.url).get(`/conversations/${id}/tracker`).expect(200);
    await request(t.url).get('/no/such/route/12345').expect(404);
    expect(actions.calls.map((c) => c.next_action)).toEqual(['action_check_balance']);

    const after = await scrape();
    // prom-client's process and Node.js set.
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_cpu_system_seconds_total',
      'process_cpu_seconds_total',
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_external_memory_bytes',
      'nodejs_active_handles_total',
      'nodejs_version_info',
    ]) {
      expect(after).toContain(`# TYPE ${name} `);
    }
    for (const name of [
      'http_request_duration_seconds',
      'parley_turns_total',
      'parley_turn_duration_seconds',
      'parley_tracker_store_query_seconds',
      'parley_model_loaded_info',
      'parley_action_server_request_duration_seconds',
      'parley_circuit_state',
      'parley_lock_wait_seconds',
      'parley_lock_acquire_failures_total',
      'parley_outbox_backlog',
      'parley_outbox_oldest_age_seconds',
      'parley_broker_publish_total',
      'parley_reminders_due',
    ]) {
      expect(after).toContain(`# TYPE ${name} `);
    }

    // Turns: two over the REST channel, one over the API; each timed.
    const turnsAfter = sample(after, 'parley_turns_total', { channel: 'rest', outcome: 'success' });
    expect(turnsAfter).toBe((turnsBefore ?? 0) + 2);
    expect(
      sample(after, 'parley_turns_total', { channel: 'api', outcome: 'success' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_turn_duration_seconds_count')).toBeGreaterThanOrEqual(3);

    // HTTP: labelled with the route template, never the raw path.
    expect(
      sample(after, 'http_request_duration_seconds_count', {
        method: 'POST',
        route: '/webhooks/rest/webhook',
        status_code: '200',
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sample(after, 'http_request_duration_seconds_count', {
        method: 'GET',
        route: '/conversations/*conversationId/tracker',
        status_code: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(after).not.toContain(id);
    expect(after).not.toContain('/no/such/route');
    expect(
      sample(after, 'http_request_duration_seconds_count', {
        method: 'GET',
        route: 'unmatched',
        status_code: '404',
      }),
    ).toBeGreaterThanOrEqual(1);

    // The lock: every turn took it (and waited, if only a little).
    expect(total(after, 'parley_lock_wait_seconds_count')).toBeGreaterThanOrEqual(3);

    // The outbox drained to the broker: every event of the conversation was published. The
    // broker holds a batch before the relay's publish resolves and counts it, and the backlog
    // gauge is refreshed at most once a second: wait until the three agree.
    await kafka.waitFor(1);
    const published = (text: string): number | null =>
      sample(text, 'parley_broker_publish_total', { broker: 'kafka', outcome: 'success' });
    let drained = after;
    for (let i = 0; i < 100; i++) {
      drained = await scrape();
      const due = sample(drained, 'parley_reminders_due');
      const settled =
        sample(drained, 'parley_outbox_backlog') === 0 &&
        published(drained) === kafka.records.length;
      if (settled && due !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(sample(drained, 'parley_outbox_backlog')).toBe(0);
    expect(sample(drained, 'parley_outbox_oldest_age_seconds')).toBe(0);
    expect(published(drained)).toBe(kafka.records.length);
    // Measured on the whole database (other servers' reminders included): present, a count.
    expect(Number.isInteger(sample(drained, 'parley_reminders_due'))).toBe(true);

    // The tracker store, the action server and the served model.
    expect(
      sample(after, 'parley_tracker_store_query_seconds_count', { op: 'appendIfUnchanged' }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      sample(after, 'parley_action_server_request_duration_seconds_count', {
        target: actionTarget(actions.url),
        outcome: 'success',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(after, 'parley_model_loaded_info', { model_id: 'f00dfeedf00dfeedf00dfeedf00dfeed' }),
    ).toBe(1);
  });

  it('readiness lists the database, the lock store, the model and the broker, liveness nothing', async () => {
    const ready = await request(t.url).get('/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
    expect(Object.keys(ready.body.details).sort()).toEqual(
      ['database', 'event_broker', 'lock_store', 'model', 'server'].sort(),
    );
    expect(ready.body.details.model).toEqual({
      status: 'up',
      loaded: true,
      model_id: 'f00dfeedf00dfeedf00dfeedf00dfeed',
    });
    const live = await request(t.url).get('/health/live').expect(200);
    expect(live.body.details).toEqual({});
  });
});

describe('GET /metrics with PARLEY_METRICS_TOKEN', () => {
  const TOKEN = 'scrape-token-0123456789';
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      env: { PARLEY_METRICS_TOKEN: TOKEN, PARLEY_AUTH_TOKEN: 'api-token-xyz' },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers the bearer token only, not the API token, with the failure body otherwise', async () => {
    const none = await request(t.url).get('/metrics').expect(401);
    expect(none.body).toEqual(expect.objectContaining({ status: 'failure', code: 401 }));
    await request(t.url).get('/metrics').set('Authorization', 'Bearer wrong').expect(401);
    await request(t.url).get('/metrics?token=api-token-xyz').expect(401);
    const ok = await request(t.url)
      .get('/metrics')
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(200);
    expect(ok.text).toContain('# TYPE parley_turns_total counter');
    // Health stays open for the probes.
    await request(t.url).get('/health/ready').expect(200);
  });
});

describe('readiness with PARLEY_READY_REQUIRES_MODEL', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { PARLEY_READY_REQUIRES_MODEL: 'true' }, withDomain: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('is 503 with each check named until a model is loaded', async () => {
    const res = await request(t.url).get('/health/ready').expect(503);
    expect(res.body).toEqual(
      expect.objectContaining({ status: 'failure', reason: 'ServiceUnavailable', code: 503 }),
    );
    expect(res.body.message).toBe('Not ready: model.');
    expect(res.body.details.model).toEqual({ status: 'down', message: 'no model loaded' });
    expect(res.body.details.database.status).toBe('up');
    expect(res.body.details.lock_store.status).toBe('up');
    await request(t.url).get('/health/live').expect(200);
    t.registry.load({
      domain: Domain.fromYaml(DOMAIN, 'domain.yml'),
      modelId: 'f00dfeedf00dfeedf00dfeedf00dfeed',
      modelFile: null,
      assistantId: 'metrics_assistant',
    });
    await request(t.url).get('/health/ready').expect(200);
  });
});
