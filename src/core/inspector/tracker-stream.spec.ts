import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { deserializeEvent } from 'src/core/events/event-codec';
import { type CommittedTurn, type RuntimeLog } from 'src/core/runtime/turn-listener';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';
import { StreamClose, TrackerStreamHub } from './tracker-stream';

let clock = 1000;
const ev = (raw: Record<string, unknown>): DialogueEvent =>
  deserializeEvent({ timestamp: (clock += 1), ...raw }, () => clock);
const action = (name: string): DialogueEvent => ev({ event: 'action', name });
const user = (text: string): DialogueEvent =>
  ev({
    event: 'user',
    text,
    parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
  });
const slot = (name: string, value: unknown): DialogueEvent => ev({ event: 'slot', name, value });

const domain = Domain.fromYaml(
  ['intents: [greet]', 'slots:', '  city:', '    type: text', '    mappings: []'].join('\n'),
);

const quiet: RuntimeLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

class FakeClient {
  readonly frames: string[] = [];
  closed: [number, string] | null = null;
  queued = 0;
  send(text: string): void {
    this.frames.push(text);
  }
  close(code: number, reason: string): void {
    this.closed = [code, reason];
  }
  buffered(): number {
    return this.queued;
  }
  states(): JsonObject[] {
    return this.frames.map((f) => JSON.parse(f) as JsonObject);
  }
}

function hubWith(states: Record<string, JsonObject> = {}): TrackerStreamHub {
  const hub = new TrackerStreamHub(quiet);
  hub.attachReader((id) => Promise.resolve(states[id] ?? { sender_id: id, events: [] }));
  return hub;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function turnOf(id: string, before: DialogueEvent[], added: DialogueEvent[]): CommittedTurn {
  const tracker = DialogueStateTracker.fromEvents(id, [...before, ...added], domain);
  return {
    conversationId: id,
    kind: 'append',
    events: added,
    firstSeq: before.length + 1,
    tracker,
    output: null,
    effects: true,
  };
}

describe('TrackerStreamHub', () => {
  it('answers retrieve with the state as compact JSON, and nothing else', async () => {
    const hub = hubWith({ a: { sender_id: 'a', slots: { city: 'Rome' }, events: [] } });
    const client = new FakeClient();
    const conn = hub.connect(client);
    conn.onText(JSON.stringify({ action: 'retrieve', sender_id: 'a' }));
    await flush();
    expect(client.frames).toEqual(['{"sender_id":"a","slots":{"city":"Rome"},"events":[]}']);
  });

  it('pushes after the user message and after each action, to watchers of that sender only', async () => {
    const hub = hubWith();
    const a = new FakeClient();
    const b = new FakeClient();
    hub.connect(a).onText('{"action":"retrieve","sender_id":"x"}');
    hub.connect(b).onText('{"action":"retrieve","sender_id":"y"}');
    await flush();
    a.frames.length = 0;
    b.frames.length = 0;
    const before = [
      action('action_session_start'),
      ev({ event: 'session_started' }),
      action('action_listen'),
    ];
    const added = [
      user('hi'),
      action('action_ask_city'),
      slot('city', 'Oslo'),
      ev({ event: 'bot', text: 'ok' }),
      action('action_listen'),
    ];
    hub.onTurnCommitted(turnOf('x', before, added));
    const states = a.states();
    expect(states.map((s) => (s.events as JsonObject[]).length)).toEqual([4, 7, 8]);
    expect(states.map((s) => s.latest_action_name)).toEqual([
      'action_listen',
      'action_ask_city',
      'action_listen',
    ]);
    expect(states[1]?.slots).toMatchObject({ city: 'Oslo' });
    expect(states[0]?.slots).toMatchObject({ city: null });
    expect(states[2]).toEqual(
      DialogueStateTracker.fromEvents('x', [...before, ...added], domain).currentState(
        EventVerbosity.AFTER_RESTART,
      ),
    );
    expect(b.frames).toEqual([]);
  });

  it('moves a socket to the conversation it retrieved last', async () => {
    const hub = hubWith();
    const c = new FakeClient();
    const conn = hub.connect(c);
    conn.onText('{"action":"retrieve","sender_id":"x"}');
    conn.onText('{"action":"retrieve","sender_id":"y"}');
    await flush();
    expect(c.states().map((s) => s.sender_id)).toEqual(['y']);
    c.frames.length = 0;
    hub.onTurnCommitted(turnOf('x', [], [user('hi')]));
    expect(c.frames).toEqual([]);
    hub.onTurnCommitted(turnOf('y', [], [user('hi')]));
    expect(c.states().map((s) => s.sender_id)).toEqual(['y']);
  });

  it.each([
    ['not JSON', '{"action":', StreamClose.INVALID_PAYLOAD],
    ['an array', '[]', StreamClose.UNSUPPORTED_DATA],
    ['null', 'null', StreamClose.UNSUPPORTED_DATA],
    [
      'a control character in sender_id',
      '{"action":"retrieve","sender_id":"a\\u0001"}',
      StreamClose.POLICY_VIOLATION,
    ],
  ])('closes the socket on %s', (_name, frame, code) => {
    const hub = hubWith();
    const client = new FakeClient();
    hub.connect(client).onText(frame);
    expect(client.closed?.[0]).toBe(code);
    expect(hub.connections).toBe(0);
  });

  it('ignores unknown actions and a retrieve without sender_id, as Rasa', async () => {
    const hub = hubWith();
    const client = new FakeClient();
    const conn = hub.connect(client);
    conn.onText('{"action":"broadcast"}');
    conn.onText('{"action":"retrieve"}');
    conn.onText('{"action":"retrieve","sender_id":""}');
    await flush();
    expect(client.closed).toBeNull();
    expect(client.frames).toEqual([]);
    expect(hub.connections).toBe(1);
    conn.onClose();
    expect(hub.connections).toBe(0);
  });

  it('closes a socket that does not read instead of queueing more', async () => {
    const hub = hubWith();
    const client = new FakeClient();
    hub.connect(client).onText('{"action":"retrieve","sender_id":"x"}');
    await flush();
    client.queued = 64 * 1024 * 1024;
    hub.onTurnCommitted(turnOf('x', [], [user('hi')]));
    expect(client.closed?.[0]).toBe(StreamClose.POLICY_VIOLATION);
    expect(hub.connections).toBe(0);
  });
});
