import {
  AssistantSource,
  type ClaimedReminder,
  CollectingOutputChannel,
  type CommittedTurn,
  ConversationRuntime,
  Domain,
  type DueReminder,
  EventVerbosity,
  FixedClock,
  type HandedOverEvents,
  InMemoryLockStore,
  InMemoryReminderStore,
  InMemoryTrackerStore,
  type JsonObject,
  type LoadedAssistant,
  type LockLease,
  OutputChannelDirectory,
  OutputDelivery,
  ReminderPoller,
  ReminderScheduler,
  type RuntimeLog,
  type SpanAttributes,
  type StoreVersion,
  type TraceSpan,
  Tracer,
  TurnListener,
  TurnObserver,
  type TurnOutcome,
  type TurnStart,
} from 'src/core';

const DOMAIN = `
version: "3.1"
intents: [greet, goodbye]
responses:
  utter_greet:
    - text: "Hello!"
slots:
  x:
    type: any
    mappings: [{ type: custom }]
session_config:
  session_expiration_time: 60
`;

class Served extends AssistantSource {
  constructor(private readonly assistant: LoadedAssistant | null) {
    super();
  }
  current(): LoadedAssistant | null {
    return this.assistant;
  }
}

class Recorder extends TurnListener {
  readonly turns: CommittedTurn[] = [];
  onTurnCommitted(turn: CommittedTurn): void {
    this.turns.push(turn);
  }
}

class Failing extends TurnListener {
  onTurnCommitted(): never {
    throw new Error('listener down');
  }
}

function quietLog(): RuntimeLog & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) };
}

interface Setup {
  runtime: ConversationRuntime;
  store: InMemoryTrackerStore;
  recorder: Recorder;
  outputs: OutputChannelDirectory;
  log: ReturnType<typeof quietLog>;
}

function setup(
  options: {
    store?: InMemoryTrackerStore;
    listeners?: TurnListener[];
    cacheSize?: number;
    observer?: TurnObserver;
    tracer?: Tracer;
    locks?: InMemoryLockStore;
  } = {},
): Setup {
  const store = options.store ?? new InMemoryTrackerStore();
  const recorder = new Recorder();
  const outputs = new OutputChannelDirectory();
  const log = quietLog();
  const domain = Domain.fromYaml(DOMAIN);
  const runtime = new ConversationRuntime({
    store,
    locks: options.locks ?? new InMemoryLockStore(),
    clock: new FixedClock(1_700_000_000, 0.01),
    assistants: new Served({ domain, modelId: 'm1', modelFile: null, assistantId: 'a1' }),
    outputs,
    listeners: [new OutputDelivery(log), ...(options.listeners ?? []), recorder],
    log,
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.tracer ? { tracer: options.tracer } : {}),
    options: {
      maxPredictions: 10,
      maxTextLength: 1000,
      cacheSize: options.cacheSize ?? 100,
      cacheBytes: 10_000_000,
      actionEndpoint: null,
      nlg: null,
    },
  });
  return { runtime, store, recorder, outputs, log };
}

const append = (
  runtime: ConversationRuntime,
  conversationId: string,
  events: Record<string, unknown>[],
  executeSideEffects = false,
  outputChannel: string | null = null,
): Promise<JsonObject> =>
  runtime.appendEvents({
    conversationId,
    events,
    verbosity: EventVerbosity.ALL,
    executeSideEffects,
    outputChannel,
  });

/** Records every turn's channel and outcome. */
class TurnLog extends TurnObserver {
  readonly ended: [string, TurnOutcome][] = [];
  turnStarted(turn: TurnStart): (outcome: TurnOutcome) => void {
    return (outcome) => this.ended.push([turn.channel, outcome]);
  }
}

/** Records span names with the name of the span open around them. */
class SpanLog extends Tracer {
  readonly spans: { name: string; parent: string | null }[] = [];
  private readonly open: string[] = [];
  inSpan<T>(name: string, _a: SpanAttributes, work: (span: TraceSpan) => T): T {
    this.spans.push({ name, parent: this.open.at(-1) ?? null });
    this.open.push(name);
    const close = (): void => void this.open.splice(this.open.lastIndexOf(name), 1);
    const result = work(this.startSpan());
    if (result instanceof Promise) return result.finally(close) as T;
    close();
    return result;
  }
  startSpan(name?: string): TraceSpan {
    if (name !== undefined) this.spans.push({ name, parent: this.open.at(-1) ?? null });
    return { setAttribute: () => undefined, recordError: () => undefined, end: () => undefined };
  }
}

/** A lock as several instances share it (the turn logic is what is tested, not the lock). */
class SharedLocks extends InMemoryLockStore {
  override sharedAcrossProcesses(): boolean {
    return true;
  }
}

/**
 * A shared lock that hands over versions as the Redis store does: what one holder leaves, the
 * next holder (of any "instance" built on the same board) gets once. With `events`, the events
 * of the holder's turn go with its version, as the Redis store hands them over too.
 */
class HandOverLocks extends SharedLocks {
  constructor(
    private readonly board: Map<string, StoreVersion>,
    private readonly turns: Map<string, HandedOverEvents> | null = null,
    private readonly passesEvents?: boolean,
  ) {
    super();
  }
  override handsOverEvents(): boolean {
    return this.turns !== null;
  }
  override withLock<T>(id: string, work: (lease: LockLease) => Promise<T>): Promise<T> {
    return super.withLock(id, () => {
      const lastVersion = this.board.get(id);
      const lastEvents = this.turns?.get(id);
      this.board.delete(id);
      this.turns?.delete(id);
      return work({
        lastVersion,
        lastEvents,
        ...(this.passesEvents === undefined ? {} : { passesEvents: this.passesEvents }),
        leave: (v, events) => {
          this.board.set(id, v);
          if (events !== undefined) this.turns?.set(id, events);
        },
      });
    });
  }
}

/**
 * Two "instances" on one store whose lock hands over versions and recent events, and a reader
 * with no cache (what a fresh read builds).
 */
function handingOverEvents(): {
  store: CountingStore;
  board: Map<string, StoreVersion>;
  turns: Map<string, HandedOverEvents>;
  a: Setup;
  b: Setup;
  fresh: Setup;
} {
  const store = new CountingStore();
  const board = new Map<string, StoreVersion>();
  const turns = new Map<string, HandedOverEvents>();
  return {
    store,
    board,
    turns,
    a: setup({ store, locks: new HandOverLocks(board, turns) }),
    b: setup({ store, locks: new HandOverLocks(board, turns) }),
    fresh: setup({ store, cacheSize: 0 }),
  };
}

/**
 * Counts conditional appends (one per attempt of a turn), full session reads, version checks
 * and reads of the events after a version (catch-ups).
 */
class CountingStore extends InMemoryTrackerStore {
  attempts = 0;
  reads = 0;
  versionChecks = 0;
  catchUps = 0;
  override retrieveAfter(
    ...args: Parameters<InMemoryTrackerStore['retrieveAfter']>
  ): ReturnType<InMemoryTrackerStore['retrieveAfter']> {
    this.catchUps++;
    return super.retrieveAfter(...args);
  }
  private appending = false;
  override version(
    ...args: Parameters<InMemoryTrackerStore['version']>
  ): ReturnType<InMemoryTrackerStore['version']> {
    // The in-memory append answers its new version through this method: not a check.
    if (!this.appending) this.versionChecks++;
    return super.version(...args);
  }
  override appendIfUnchanged(
    ...args: Parameters<InMemoryTrackerStore['appendIfUnchanged']>
  ): ReturnType<InMemoryTrackerStore['appendIfUnchanged']> {
    this.attempts++;
    this.appending = true;
    try {
      return super.appendIfUnchanged(...args);
    } finally {
      this.appending = false;
    }
  }
  override retrieveVersioned(
    ...args: Parameters<InMemoryTrackerStore['retrieveVersioned']>
  ): ReturnType<InMemoryTrackerStore['retrieveVersioned']> {
    this.reads++;
    return super.retrieveVersioned(...args);
  }
}

/** A store where another writer always got there first: every conditional append is refused. */
class AlwaysOvertaken extends InMemoryTrackerStore {
  attempts = 0;
  override appendIfUnchanged(): Promise<null> {
    this.attempts++;
    return Promise.resolve(null);
  }
}

class BrokenStore extends InMemoryTrackerStore {
  override appendIfUnchanged(): never {
    throw new Error('store down');
  }
}

describe('ConversationRuntime', () => {
  it('tells the observer each turn’s channel and outcome, failed turns included', async () => {
    const observer = new TurnLog();
    const { runtime } = setup({ observer });
    await runtime.handleMessage({
      senderId: 'o1',
      text: '/greet',
      inputChannel: 'rest',
      output: new CollectingOutputChannel(),
    });
    await append(runtime, 'o1', [{ event: 'slot', name: 'x', value: 1 }]);
    expect(observer.ended).toEqual([
      ['rest', 'success'],
      ['api', 'success'],
    ]);

    const broken = new TurnLog();
    const failing = setup({ observer: broken, store: new BrokenStore() });
    await expect(append(failing.runtime, 'o2', [])).rejects.toThrow('store down');
    expect(broken.ended).toEqual([['api', 'error']]);
  });

  it('opens the turn span around the lock wait and the work', async () => {
    const tracer = new SpanLog();
    const { runtime } = setup({ tracer });
    await append(runtime, 't1', [{ event: 'slot', name: 'x', value: 1 }]);
    expect(tracer.spans).toEqual([
      { name: 'parley.turn', parent: null },
      { name: 'parley.lock.acquire', parent: 'parley.turn' },
    ]);
  });

  it('commits a turn to the store and tells the listeners its events and sequence numbers', async () => {
    const { runtime, store, recorder } = setup();
    await append(runtime, 'c1', [{ event: 'slot', name: 'x', value: 1 }]);
    await append(runtime, 'c1', [
      { event: 'slot', name: 'x', value: 2 },
      { event: 'slot', name: 'x', value: 3 },
    ]);

    const stored = (await store.retrieve('c1')) ?? [];
    // The first turn opened a session (action_session_start, session_started, action_listen)
    // before the slot.
    expect(stored.map((e) => e.event)).toEqual([
      'action',
      'session_started',
      'action',
      'slot',
      'slot',
      'slot',
    ]);
    expect(recorder.turns.map((t) => [t.kind, t.firstSeq, t.events.length])).toEqual([
      ['append', 1, 4],
      ['append', 5, 2],
    ]);
    expect(recorder.turns[1]?.tracker.getSlot('x')).toBe(3);
  });

  it('sends bot messages to the named output channel only when side effects are asked for', async () => {
    const { runtime, outputs } = setup();
    const channel = new CollectingOutputChannel('mychannel');
    outputs.register('mychannel', () => channel);
    const bot = { event: 'bot', text: 'hi there' };

    await append(runtime, 'c2', [bot]);
    expect(channel.messages).toEqual([]);

    await append(runtime, 'c2', [bot], true, 'mychannel');
    expect(channel.messages).toEqual([
      expect.objectContaining({ recipient_id: 'c2', text: 'hi there' }),
    ]);
  });

  it('runs an action and answers the collected bot messages with the tracker', async () => {
    const { runtime } = setup();
    await append(runtime, 'c3', [{ event: 'user', text: 'hey' }]);
    const answer = await runtime.execute({
      conversationId: 'c3',
      action: 'utter_greet',
      policy: null,
      confidence: null,
      outputChannel: null,
      verbosity: EventVerbosity.AFTER_RESTART,
    });
    expect(answer.messages).toEqual([
      expect.objectContaining({ recipient_id: 'c3', text: 'Hello!' }),
    ]);
    const events = answer.tracker.events as JsonObject[];
    expect(events.some((e) => e.event === 'bot' && e.text === 'Hello!')).toBe(true);
  });

  it('refuses an action on a conversation that does not exist, storing nothing', async () => {
    const { runtime, store, recorder } = setup();
    await expect(
      runtime.execute({
        conversationId: 'ghost',
        action: 'utter_greet',
        policy: null,
        confidence: null,
        outputChannel: null,
        verbosity: EventVerbosity.AFTER_RESTART,
      }),
    ).rejects.toMatchObject({ code: 'TRACKER.CONVERSATION_NOT_FOUND' });
    expect(await store.exists('ghost')).toBe(false);
    expect(recorder.turns).toEqual([]);
  });

  it('reloads and redoes the work when another instance wrote first (no lost update)', async () => {
    const store = new InMemoryTrackerStore();
    const a = setup({ store });
    const b = setup({ store });
    await append(a.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'a1' }]);
    // b writes behind a's back: a's cached session is now stale.
    await append(b.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'b1' }]);
    await append(a.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'a2' }]);

    const values = ((await store.retrieve('shared')) ?? [])
      .filter((e) => e.event === 'slot')
      .map((e) => (e as JsonObject).value);
    expect(values).toEqual(['a1', 'b1', 'a2']);
    const last = a.recorder.turns[a.recorder.turns.length - 1];
    // Session start (3) + a1 + b1 before it.
    expect(last?.firstSeq).toBe(6);
  });

  it('answers a write conflict (409 code), storing nothing, when another writer wins every attempt', async () => {
    const store = new AlwaysOvertaken();
    const { runtime, recorder } = setup({ store });
    const turn = append(runtime, 'contested', [{ event: 'slot', name: 'x', value: 1 }]);
    await expect(turn).rejects.toMatchObject({ code: 'TRACKER.WRITE_CONFLICT' });
    // Each attempt read the conversation again and tried once more; none was stored or announced.
    expect(store.attempts).toBe(5);
    expect(await store.retrieve('contested')).toBeNull();
    expect(recorder.turns).toEqual([]);
  });

  it('checks a cached session against the store first when the lock is shared: a turn after another instance wrote runs once', async () => {
    const store = new CountingStore();
    const a = setup({ store, locks: new SharedLocks() });
    const b = setup({ store, locks: new SharedLocks() });
    await append(a.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'a1' }]);
    await append(b.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'b1' }]);
    store.attempts = 0;
    // a's cached session is stale: it reads the newer one before the work, not after a refusal.
    await append(a.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'a2' }]);
    expect(store.attempts).toBe(1);
    const values = ((await store.retrieve('shared')) ?? [])
      .filter((e) => e.event === 'slot')
      .map((e) => (e as JsonObject).value);
    expect(values).toEqual(['a1', 'b1', 'a2']);
    // Unchanged since: the cached session serves without a reload.
    store.attempts = 0;
    store.reads = 0;
    await append(a.runtime, 'shared', [{ event: 'slot', name: 'n', value: 'a3' }]);
    expect([store.attempts, store.reads]).toEqual([1, 0]);
  });

  it('brings a stale cached session up to date with what another instance wrote, as a fresh read builds it', async () => {
    const store = new CountingStore();
    const a = setup({ store, locks: new SharedLocks() });
    const b = setup({ store, locks: new SharedLocks() });
    const fresh = setup({ store, cacheSize: 0 });
    const user = (text: string): Record<string, unknown> => ({
      event: 'user',
      text,
      parse_data: { intent: { name: 'greet', confidence: 0.9 }, entities: [] },
    });
    await append(a.runtime, 'caught', [user('hi'), { event: 'slot', name: 'x', value: 'a1' }]);
    for (let round = 1; round <= 3; round++) {
      await append(b.runtime, 'caught', [
        { event: 'bot', text: `b${round}` },
        { event: 'slot', name: 'x', value: `b${round}` },
        user(`again ${round}`),
      ]);
      store.reads = 0;
      store.catchUps = 0;
      store.attempts = 0;
      // Round-robin: a's copy is one turn behind; it reads only the events since, once.
      const answer = await append(a.runtime, 'caught', [
        { event: 'slot', name: 'x', value: `a${round + 1}` },
      ]);
      expect([store.reads, store.catchUps, store.attempts]).toEqual([0, 1, 1]);
      expect(answer).toEqual(await fresh.runtime.trackerState('caught', EventVerbosity.ALL));
    }
    const values = ((await store.retrieve('caught')) ?? [])
      .filter((e) => e.event === 'slot')
      .map((e) => (e as JsonObject).value);
    expect(values).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4']);
  });

  it('reads the latest session whole when another instance started a new one', async () => {
    const store = new CountingStore();
    const a = setup({ store, locks: new SharedLocks() });
    const b = setup({ store, locks: new SharedLocks() });
    await append(a.runtime, 'renewed', [{ event: 'slot', name: 'x', value: 'old' }]);
    await append(b.runtime, 'renewed', [
      { event: 'action', name: 'action_session_start' },
      { event: 'session_started' },
      { event: 'action', name: 'action_listen' },
    ]);
    store.reads = 0;
    store.catchUps = 0;
    const answer = await append(a.runtime, 'renewed', [{ event: 'slot', name: 'y', value: 1 }]);
    expect([store.reads, store.catchUps]).toEqual([1, 1]);
    // a's session is the new one: the slot set before it is gone, as on a fresh read.
    expect((answer.slots as JsonObject).x).toBeNull();
    const events = answer.events as JsonObject[];
    expect(events[0]).toMatchObject({ event: 'action', name: 'action_session_start' });
  });

  it('uses a cached session without asking the store when the lock hands over its version', async () => {
    const store = new CountingStore();
    const board = new Map<string, StoreVersion>();
    const a = setup({ store, locks: new HandOverLocks(board) });
    const b = setup({ store, locks: new HandOverLocks(board) });
    await append(a.runtime, 'handed', [{ event: 'slot', name: 'n', value: 'a1' }]);
    expect(board.get('handed')).toEqual(await store.version('handed'));
    store.versionChecks = 0;
    store.reads = 0;
    // The version a's own last turn left is the one it cached: no check, no read.
    await append(a.runtime, 'handed', [{ event: 'slot', name: 'n', value: 'a2' }]);
    expect([store.versionChecks, store.reads]).toEqual([0, 0]);
    // b wrote since: the handed-over version differs, a reads what b wrote and runs once.
    await append(b.runtime, 'handed', [{ event: 'slot', name: 'n', value: 'b1' }]);
    store.attempts = 0;
    store.reads = 0;
    store.catchUps = 0;
    await append(a.runtime, 'handed', [{ event: 'slot', name: 'n', value: 'a3' }]);
    expect([store.attempts, store.reads, store.catchUps]).toEqual([1, 0, 1]);
    // Nothing handed over (a holder died): the store is asked.
    board.clear();
    store.catchUps = 0;
    await append(a.runtime, 'handed', [{ event: 'slot', name: 'n', value: 'a4' }]);
    expect([store.reads, store.catchUps]).toEqual([0, 1]);
    const values = ((await store.retrieve('handed')) ?? [])
      .filter((e) => e.event === 'slot')
      .map((e) => (e as JsonObject).value);
    expect(values).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  it('takes what another instance stored from the events the lock hands over: round-robin turns read nothing', async () => {
    const { store, a, b, fresh } = handingOverEvents();
    const user = (text: string): Record<string, unknown> => ({
      event: 'user',
      text,
      parse_data: { intent: { name: 'greet', confidence: 0.9 }, entities: [] },
    });
    await append(a.runtime, 'rr', [user('hi'), { event: 'slot', name: 'x', value: 'a1' }]);
    // b has never seen the conversation: the events handed over are all of it, so b builds it
    // from them.
    store.reads = 0;
    store.catchUps = 0;
    store.versionChecks = 0;
    const first = await append(b.runtime, 'rr', [{ event: 'slot', name: 'x', value: 'b1' }]);
    expect([store.reads, store.catchUps, store.versionChecks]).toEqual([0, 0, 0]);
    expect(first).toEqual(await fresh.runtime.trackerState('rr', EventVerbosity.ALL));
    for (let round = 2; round <= 4; round++) {
      for (const [name, side] of [
        ['a', a],
        ['b', b],
      ] as const) {
        store.reads = 0;
        store.catchUps = 0;
        store.versionChecks = 0;
        store.attempts = 0;
        const answer = await append(side.runtime, 'rr', [
          { event: 'bot', text: `${name}${round}` },
          { event: 'slot', name: 'x', value: `${name}${round}` },
          user(`again ${name}${round}`),
        ]);
        // One turn behind: what the other instance stored came with the lock.
        expect([store.reads, store.catchUps, store.versionChecks, store.attempts]).toEqual([
          0, 0, 0, 1,
        ]);
        expect(answer).toEqual(await fresh.runtime.trackerState('rr', EventVerbosity.ALL));
      }
    }
    const values = ((await store.retrieve('rr')) ?? [])
      .filter((e) => e.event === 'slot')
      .map((e) => (e as JsonObject).value);
    expect(values).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'b4']);
  });

  it('hands no events over when the lease passes none on, and the next instance reads them', async () => {
    const store = new CountingStore();
    const board = new Map<string, StoreVersion>();
    const turns = new Map<string, HandedOverEvents>();
    const a = setup({ store, locks: new HandOverLocks(board, turns, false) });
    const b = setup({ store, locks: new HandOverLocks(board, turns, false) });
    const fresh = setup({ store, cacheSize: 0 });
    await append(a.runtime, 'kept', [{ event: 'slot', name: 'x', value: 'a1' }]);
    await append(a.runtime, 'kept', [{ event: 'slot', name: 'x', value: 'a2' }]);
    expect([board.has('kept'), turns.size]).toEqual([true, 0]);
    store.reads = 0;
    store.catchUps = 0;
    const answer = await append(b.runtime, 'kept', [{ event: 'slot', name: 'x', value: 'b1' }]);
    expect(store.reads + store.catchUps).toBe(1);
    expect(answer).toEqual(await fresh.runtime.trackerState('kept', EventVerbosity.ALL));
  });

  it('reads what another instance stored when the handed-over events do not reach back to the cached session', async () => {
    const { store, board, turns, a, b, fresh } = handingOverEvents();
    await append(a.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'a1' }]);
    await append(b.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'b1' }]);
    await append(b.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'b2' }]);
    // a is two turns behind, and the recent events handed over cover both of b's turns.
    store.reads = 0;
    store.catchUps = 0;
    const answer = await append(a.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'a2' }]);
    expect([store.reads, store.catchUps]).toEqual([0, 0]);
    expect(answer).toEqual(await fresh.runtime.trackerState('gap', EventVerbosity.ALL));
    await append(b.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'b3' }]);
    await append(b.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'b4' }]);
    const version = board.get('gap')!;
    // Only the last turn handed over (an older part dropped): a, two turns behind, reads.
    const last = (await store.retrieve('gap'))!.at(-1)!;
    turns.set('gap', {
      after: { generation: version.generation, lastSeq: version.lastSeq - 1 },
      json: JSON.stringify([last]),
    });
    store.catchUps = 0;
    const again = await append(a.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'a3' }]);
    expect(store.catchUps).toBe(1);
    expect(again).toEqual(await fresh.runtime.trackerState('gap', EventVerbosity.ALL));
    // Events that do not add up to the version handed over are not applied either.
    await append(b.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'b5' }]);
    turns.set('gap', { after: turns.get('gap')!.after, json: '[]' });
    store.catchUps = 0;
    const third = await append(a.runtime, 'gap', [{ event: 'slot', name: 'x', value: 'a4' }]);
    expect(store.catchUps).toBe(1);
    expect(third).toEqual(await fresh.runtime.trackerState('gap', EventVerbosity.ALL));
  });

  it('keeps a committed turn when a listener fails, and still runs the listeners after it', async () => {
    const { runtime, store, recorder, log } = setup({ listeners: [new Failing()] });
    await append(runtime, 'c4', [{ event: 'slot', name: 'x', value: 1 }]);
    expect(await store.exists('c4')).toBe(true);
    expect(recorder.turns).toHaveLength(1);
    expect(log.errors).toEqual(['a turn listener failed']);
  });

  it.each([
    ['a text over the limit', { senderId: 'ok', text: 'x'.repeat(1001) }, 'max_text_length'],
    ['a sender with a control character', { senderId: 'a\u0000b', text: 'hi' }, 'control'],
    ['an empty sender', { senderId: '', text: 'hi' }, 'length'],
  ])(
    'refuses a user message with %s, whatever the channel, and stores nothing',
    async (_what, m, rule) => {
      const { runtime, store, recorder } = setup();
      const output = new CollectingOutputChannel('any');
      await expect(
        runtime.handleMessage({ ...m, inputChannel: 'any', output, metadata: null }),
      ).rejects.toMatchObject({ code: 'REQUEST.INVALID_PARAMETER', details: { rule } });
      expect(await store.exists(m.senderId)).toBe(false);
      expect(recorder.turns).toEqual([]);
    },
  );

  it('announces a replace as the whole new log', async () => {
    const { runtime, store, recorder } = setup();
    await append(runtime, 'c5', [{ event: 'slot', name: 'x', value: 1 }]);
    await runtime.replaceEvents({
      conversationId: 'c5',
      events: [{ event: 'slot', name: 'y', value: 2 }],
      verbosity: EventVerbosity.ALL,
    });
    expect((await store.retrieve('c5'))?.map((e) => e.event)).toEqual(['slot']);
    const last = recorder.turns[recorder.turns.length - 1];
    expect([last?.kind, last?.firstSeq, last?.events.length]).toEqual(['replace', 1, 1]);
  });

  it('reads a tracker it did not write through the same cache rules (stale cache detected)', async () => {
    const store = new InMemoryTrackerStore();
    const a = setup({ store });
    const b = setup({ store });
    await append(a.runtime, 'c6', [{ event: 'slot', name: 'x', value: 1 }]);
    await a.runtime.trackerState('c6', EventVerbosity.ALL);
    await append(b.runtime, 'c6', [{ event: 'slot', name: 'x', value: 2 }]);
    const state = await a.runtime.trackerState('c6', EventVerbosity.ALL);
    expect((state.slots as JsonObject).x).toBe(2);
  });

  it('fires a stored reminder through the poller once, unless a user message came after it (kill_on_user_msg)', async () => {
    const reminders = new InMemoryReminderStore();
    const scheduler = new ReminderScheduler(quietLog());
    const { runtime, store } = setup({
      store: new InMemoryTrackerStore(reminders),
      listeners: [scheduler],
    });
    const poller = new ReminderPoller(reminders, (due) => runtime.fireReminder(due), quietLog(), {
      sweepMs: 3_600_000,
    });
    const at = '2023-11-14T22:14:00+00:00';
    for (const [conversation, kill] of [
      ['killed', true],
      ['kept', false],
    ] as const) {
      await append(
        runtime,
        conversation,
        [{ event: 'reminder', intent: 'greet', date_time: at, name: 'r', kill_on_user_msg: kill }],
        true,
      );
      const output = new CollectingOutputChannel('any');
      await runtime.handleMessage({
        senderId: conversation,
        text: '/goodbye',
        inputChannel: 'any',
        output,
        metadata: null,
      });
    }
    // Not executed as a side effect: not stored.
    await append(runtime, 'ignored', [{ event: 'reminder', intent: 'greet', date_time: at }]);
    // The user message cancelled the kill_on_user_msg reminder with its own commit.
    expect(reminders.list().map((r) => r.conversationId)).toEqual(['kept']);
    poller.start();
    await poller.sweep();
    await poller.stop();
    expect(reminders.size).toBe(0);
    const intents = async (id: string): Promise<unknown[]> =>
      ((await store.retrieve(id)) ?? [])
        .filter((e) => e.event === 'user')
        .map((e) => (e.parse_data as { intent: { name: string } }).intent.name);
    expect(await intents('killed')).toEqual(['goodbye']);
    expect(await intents('kept')).toEqual(['goodbye', 'greet']);
  });

  it('fires a reminder handed over twice once (an instance died after the turn committed, before completing it)', async () => {
    const reminders = new InMemoryReminderStore();
    const { runtime, store } = setup({
      store: new InMemoryTrackerStore(reminders),
      listeners: [new ReminderScheduler(quietLog())],
    });
    const at = '2023-11-14T22:14:00+00:00';
    const set = (name: string, intent: string): Promise<JsonObject> =>
      append(
        runtime,
        'c1',
        [{ event: 'reminder', intent, date_time: at, name, kill_on_user_msg: false }],
        true,
      );
    await set('r', 'greet');
    await set('other', 'goodbye');
    const claimed = await reminders.claimDue(Date.parse(at), 10, 1_000);
    const due = (name: string): DueReminder =>
      claimed.find((r) => r.name === name) as ClaimedReminder;
    // The first instance fires `r` and dies before completing it; after its lease another
    // instance claims `r` again and is handed the same reminder.
    await runtime.fireReminder(due('r'));
    await runtime.fireReminder(due('r'));
    // Two at once (a claim taken over while the first turn ran): one fires.
    await Promise.all([runtime.fireReminder(due('other')), runtime.fireReminder(due('other'))]);
    // Set again under its name (a new reminder): it fires.
    await set('r', 'greet');
    const [again] = await reminders.claimDue(Date.parse(at), 10, 1_000);
    await runtime.fireReminder(again as ClaimedReminder);
    const users = ((await store.retrieve('c1')) ?? []).filter((e) => e.event === 'user');
    expect(users.map((e) => (e.parse_data as { intent: { name: string } }).intent.name)).toEqual([
      'greet',
      'goodbye',
      'greet',
    ]);
    expect(users[0]?.metadata).toMatchObject({
      is_external: true,
      reminder: {
        name: 'r',
        scheduled_at: due('r').scheduledAt,
        date_time: '2023-11-14T22:14:00.000Z',
      },
    });
  });

  it('drops the reminder of a conversation deleted before it fires, rather than bring it back', async () => {
    const reminders = new InMemoryReminderStore();
    const scheduler = new ReminderScheduler(quietLog());
    const { runtime, store } = setup({
      store: new InMemoryTrackerStore(reminders),
      listeners: [scheduler],
    });
    const poller = new ReminderPoller(reminders, (due) => runtime.fireReminder(due), quietLog(), {
      sweepMs: 3_600_000,
    });
    const at = '2023-11-14T22:14:00+00:00';
    for (const conversation of ['deleted', 'kept']) {
      await append(
        runtime,
        conversation,
        [{ event: 'reminder', intent: 'greet', date_time: at, name: 'r' }],
        true,
      );
    }
    await runtime.deleteConversation('deleted');
    poller.start();
    await poller.sweep();
    await poller.stop();
    expect(reminders.size).toBe(0);
    expect(await store.exists('deleted')).toBe(false);
    const kept = (await store.retrieve('kept')) ?? [];
    expect(kept.filter((e) => e.event === 'user').length).toBe(1);
  });
});
