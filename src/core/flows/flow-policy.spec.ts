import { ActionExecutionRejection } from 'src/core/actions/action';
import { type ActionEndpoint } from 'src/core/actions/remote-action';
import { Domain } from 'src/core/domain/domain';
import { deserializeEvents, serializeEvents } from 'src/core/events/event-codec';
import { slotSet } from 'src/core/events/slot-set';
import { PolicyEnsemble } from 'src/core/policies/policy-ensemble';
import { DialogueProcessor, type ParsedUserMessage } from 'src/core/processor/dialogue-processor';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { userFlowFrame } from './flow-executor';
import { FLOW_POLICY_PRIORITY, FlowPolicy } from './flow-policy';
import { FlowsList } from './flows-list';
import {
  counter,
  flow,
  frameIds,
  PATTERN_ACTION_NAMES,
  PATTERN_RESPONSES,
  PATTERNS,
  step,
  trackerWith,
} from './testing-flows';

const flows = new FlowsList([
  flow('ask_name', [step.collect('ask', 'name'), step.action('greet', 'utter_greet')]),
  ...PATTERNS,
]);

const domain = Domain.fromObject({
  slots: { name: { type: 'text', mappings: [] } },
  responses: {
    ...PATTERN_RESPONSES,
    utter_ask_name: [{ text: 'What is your name?' }],
    utter_greet: [{ text: 'Hi {name}!' }],
  },
  actions: PATTERN_ACTION_NAMES,
});

function ensemble(): PolicyEnsemble {
  return PolicyEnsemble.of([new FlowPolicy(flows, FLOW_POLICY_PRIORITY, { now: counter() })]);
}

/** A user message whose parse data carries a `start flow` command for `flow`. */
function startingFlow(flow: string): ParsedUserMessage {
  return {
    text: `start ${flow}`,
    parseData: {
      intent: { name: flow, confidence: 1 },
      entities: [],
      commands: [{ command: 'start flow', flow }],
    },
    inputChannel: null,
    messageId: null,
  };
}

/** A CALM processor: FlowPolicy alone, the flows as its CALM set-up, no command generators. */
function calmProcessor(
  flowList: FlowsList,
  d: Domain,
  endpoint: ActionEndpoint | null,
  now: () => number,
): DialogueProcessor {
  const policy = new FlowPolicy(flowList, FLOW_POLICY_PRIORITY, { now, newFrameId: frameIds() });
  return new DialogueProcessor(d, PolicyEnsemble.of([policy]), {
    endpoint,
    now,
    calm: { flows: flowList, generators: [] },
  });
}

describe('FlowPolicy', () => {
  it('abstains with an empty stack and when another policy owns the top frame', () => {
    for (const frames of [[], [{ frame_id: 'C1', type: 'chitchat' }]]) {
      const p = ensemble().predict(trackerWith(domain, frames), domain);
      expect(p.maxConfidence).toBe(0);
      expect(p.events).toEqual([]);
      expect(p.probabilities.every((x) => x === 0)).toBe(true);
    }
  });

  it('predicts the next step with confidence 1, its events as optional events, and metadata', () => {
    const tracker = trackerWith(domain, [userFlowFrame('ask_name', 'U1', 'regular')]);
    const p = ensemble().predict(tracker, domain);
    expect(p.actionName).toBe('action_run_slot_rejections');
    expect(p.maxConfidence).toBe(1);
    expect(p.policyName).toBe('policy_0_FlowPolicy');
    expect(p.priority).toBe(7);
    expect(p.optionalEvents.map((e) => e.type)).toEqual([
      'stack',
      'stack',
      'flow_started',
      'stack',
      'flow_started',
    ]);
    expect(p.events).toEqual(p.optionalEvents);
    expect(p.actionMetadata).toEqual({ active_flow: 'ask_name', step_id: 'ask' });
  });

  it("stamps its events with the turn's clock when the ensemble is given one", () => {
    const tracker = trackerWith(domain, [userFlowFrame('ask_name', 'U1', 'regular')]);
    let t = 2_000_000_000;
    const p = ensemble().predict(tracker, domain, () => (t += 0.5));
    expect(p.optionalEvents.map((e) => e.timestamp)).toEqual([
      2_000_000_000.5, 2_000_000_001, 2_000_000_001.5, 2_000_000_002, 2_000_000_002.5,
    ]);
  });

  it('is built from config.yml with the flows and stored as config only', () => {
    const trained = PolicyEnsemble.train(
      [{ name: 'FlowPolicy' }, { name: 'RulePolicy' }],
      [],
      domain,
      flows,
    );
    const json = trained.toJSON();
    expect((json.policies as unknown[])[0]).toEqual({ type: 'FlowPolicy', priority: 7 });
    const loaded = PolicyEnsemble.fromJSON(JSON.parse(JSON.stringify(json)) as typeof json, flows);
    const tracker = trackerWith(domain, [userFlowFrame('ask_name', 'U1', 'regular')]);
    // FlowPolicy's priority wins the tie with RulePolicy's fallback.
    expect(loaded.predict(tracker, domain).actionName).toBe('action_run_slot_rejections');
    expect(
      PolicyEnsemble.train([{ name: 'FlowPolicy', priority: 9 }], [], domain, flows).toJSON(),
    ).toEqual({ policies: [{ type: 'FlowPolicy', priority: 9 }] });
  });

  it('drives the processor: action and bot events carry active_flow and step_id', async () => {
    const now = counter();
    const processor = new DialogueProcessor(
      domain,
      PolicyEnsemble.of([
        new FlowPolicy(flows, FLOW_POLICY_PRIORITY, { now, newFrameId: frameIds() }),
      ]),
      { endpoint: null, now },
    );
    const tracker = trackerWith(domain, [userFlowFrame('ask_name', 'U1', 'regular')]);
    await processor.runPredictionLoop(tracker, null);
    const ask = tracker.events.find((e) => e.type === 'bot');
    expect(ask).toMatchObject({
      text: 'What is your name?',
      metadata: { utter_action: 'utter_ask_name', active_flow: 'ask_name', step_id: 'ask' },
    });
    const asked = tracker.events.find((e) => e.type === 'action' && e.name === 'utter_ask_name');
    expect(asked).toMatchObject({
      policy: 'policy_0_FlowPolicy',
      confidence: 1,
      metadata: { active_flow: 'ask_name', step_id: 'ask' },
    });
    expect(tracker.latestActionName).toBe('action_listen');

    tracker.update(slotSet({ name: 'name', value: 'Ada', timestamp: now() }));
    await processor.runPredictionLoop(tracker, null);
    const texts = tracker.events.filter((e) => e.type === 'bot').map((e) => e.text);
    expect(texts).toEqual(['What is your name?', 'Hi Ada!', 'What else can I help you with?']);
    expect(tracker.events.filter((e) => e.type === 'bot').at(-1)).toMatchObject({
      metadata: { active_flow: 'pattern_completed', step_id: 'completed' },
    });
    expect(tracker.stack).toEqual([]);
    expect(tracker.getSlot('name')).toBeNull();
  });

  it("logs the command processor's push and the flow's first move as one stack event", async () => {
    const now = counter();
    const processor = calmProcessor(flows, domain, null, now);
    const tracker = DialogueStateTracker.fromEvents('spec', [], domain);
    await processor.handleUserMessage(tracker, startingFlow('ask_name'), null);
    const types = tracker.events.map((e) => e.type);
    // The first turn also stores the flows' fingerprints (`flow_hashes`).
    expect(types.slice(0, 4)).toEqual(['user', 'slot', 'stack', 'stack']);
    const first = tracker.events[2] as { update: string };
    expect(JSON.parse(first.update)).toEqual([
      { op: 'add', path: '/0', value: expect.objectContaining({ flow_id: 'ask_name' }) },
      { op: 'replace', path: '/0/step_id', value: 'ask' },
    ]);
    expect(tracker.latestActionName).toBe('action_listen');
    // Replayed from its stored form, the conversation ends on the same stack.
    const replayed = DialogueStateTracker.fromEvents(
      'spec',
      deserializeEvents(
        JSON.parse(JSON.stringify(serializeEvents(tracker.events))) as Record<string, unknown>[],
        now,
      ),
      domain,
    );
    expect(replayed.stack).toEqual(tracker.stack);
    expect(tracker.stack.map((f) => (f as { flow_id: string }).flow_id)).toEqual([
      'ask_name',
      'pattern_collect_information',
    ]);
  });

  it("logs the command processor's push alone when the flow's first action is rejected", async () => {
    const checking = new FlowsList([
      flow('check', [step.action('run', 'action_check')]),
      ...PATTERNS,
    ]);
    const checkDomain = Domain.fromObject({
      responses: PATTERN_RESPONSES,
      actions: [...PATTERN_ACTION_NAMES, 'action_check'],
    });
    const rejecting = {
      call: (name: string) => Promise.reject(new ActionExecutionRejection(name, 'not now')),
    } as unknown as ActionEndpoint;
    const now = counter();
    const processor = calmProcessor(checking, checkDomain, rejecting, now);
    const tracker = DialogueStateTracker.fromEvents('spec', [], checkDomain);
    await processor.handleUserMessage(tracker, startingFlow('check'), null);
    expect(tracker.events.map((e) => e.type).slice(0, 4)).toEqual([
      'user',
      'slot',
      'stack',
      'action_execution_rejected',
    ]);
    const pushed = tracker.events[2] as { update: string };
    expect(JSON.parse(pushed.update)).toEqual([
      {
        op: 'add',
        path: '/0',
        value: expect.objectContaining({ flow_id: 'check', step_id: 'START' }),
      },
    ]);
  });
});
