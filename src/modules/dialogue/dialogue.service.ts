import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  ActionEndpoint,
  AssistantSource,
  botMessageOf,
  Clock,
  CollectingOutputChannel,
  DialogueError,
  type DialogueEvent,
  DialogueProcessor,
  type DialogueStateTracker,
  EventVerbosity,
  type JsonObject,
  type LoadedAssistant,
  MessageHandler,
  needsSessionStart,
  NlgServer,
  type OutputChannel,
  OutputChannelDirectory,
  requireConversationId,
  requireUserText,
  startSession,
  type UserMessage,
} from 'src/core';
import { parseText } from 'src/modules/model';
import { verbosityParam } from 'src/modules/tracker/query-params';
import { TrackerService } from 'src/modules/tracker/tracker.service';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { PARLEY_VERSION } from 'src/platform/config/version';
import { readDialogueEndpoints } from './action-endpoint';

import { ReminderScheduler } from './reminder.scheduler';

/** The result of a turn: the tracker after it and the events it added. */
export interface TurnResult {
  readonly tracker: DialogueStateTracker;
  readonly events: readonly DialogueEvent[];
}

/** What a turn does on the conversation, given the processor and the output channel name. */
type TurnWork = (
  processor: DialogueProcessor,
  tracker: DialogueStateTracker,
) => Promise<void> | void;

/**
 * The message loop of the server (Rasa's MessageProcessor + Agent): every turn runs under the
 * conversation's lock on its latest session (TrackerService.transact) — session start/expiry,
 * the turn's work (message, intent, action), one conditional append — and then the side
 * effects: bot messages to the output channel, reminders scheduled or cancelled.
 */
@Injectable()
export class DialogueService extends MessageHandler implements OnModuleInit {
  private readonly logger = new Logger(DialogueService.name);
  private endpoint: ActionEndpoint | null = null;
  private nlg: NlgServer | null = null;

  constructor(
    private readonly trackers: TrackerService,
    private readonly assistants: AssistantSource,
    private readonly clock: Clock,
    private readonly channels: OutputChannelDirectory,
    private readonly reminders: ReminderScheduler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
    reminders.onFire((senderId, intent, entities, scheduledAt, kill, channel) =>
      this.fireReminder(senderId, intent, entities, scheduledAt, kill, channel),
    );
  }

  async onModuleInit(): Promise<void> {
    const file = this.config.files.endpoints;
    if (file === null) return;
    const endpoints = await readDialogueEndpoints(
      file,
      PARLEY_VERSION,
      this.config.dialogue.actionTimeoutMs,
      { lockStore: this.config.lockStore.type },
    );
    for (const warning of endpoints.warnings) this.logger.warn({ file }, warning);
    this.endpoint = endpoints.action;
    this.nlg = endpoints.nlg;
    if (this.endpoint !== null) {
      this.logger.log({ url: this.endpoint.config.url }, 'custom action server configured');
    }
    if (this.nlg !== null) {
      this.logger.log(
        { url: this.nlg.config.url },
        'NLG server configured (responses come from it)',
      );
    }
  }

  /** For tests and tools: the action server in use. */
  setActionEndpoint(endpoint: ActionEndpoint | null): void {
    this.endpoint = endpoint;
  }

  /** MessageHandler: one user message end to end; answers go to `message.output`. */
  async handleMessage(message: UserMessage): Promise<void> {
    // Every channel checks these first; this keeps a channel that does not from storing what
    // the conversation id and text rules refuse.
    requireConversationId(message.senderId, 'sender', 'body');
    if (message.text !== null) requireUserText(message.text, this.config.http.maxTextLength);
    const assistant = this.assistants.current();
    if (assistant === null) {
      this.logger.warn({ sender: message.senderId }, 'no model loaded; message ignored');
      return;
    }
    const text = message.text ?? '';
    const parseData = (message.parseData ?? parseText(assistant.nlu, text)) as JsonObject;
    const messageId = message.messageId ?? randomUUID().replace(/-/g, '');
    const result = await this.turn(
      message.senderId,
      assistant,
      message.output.name,
      message.metadata ?? null,
      (processor, tracker) =>
        processor.handleUserMessage(
          tracker,
          {
            text: message.text,
            parseData,
            inputChannel: message.inputChannel,
            messageId,
            metadata: message.metadata ?? null,
          },
          message.output.name,
        ),
    );
    await this.sideEffects(message.senderId, result.events, message.output);
  }

  /** Op 9: an intent stands in for a user message. */
  async triggerIntent(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
    outputChannel: unknown,
  ): Promise<JsonObject> {
    const assistant = this.assistants.require();
    const b = objectBody(body);
    const name = requiredName(b, 'intent');
    const entities = entityList(b.entities);
    // The entities stand in for the user's text: the same bound applies to their JSON.
    requireUserText(JSON.stringify(entities), this.config.http.maxTextLength, 'entities');
    const verbosity = verbosityOf(includeEvents);
    if (!assistant.domain.intents.includes(name)) {
      throw new DialogueError(
        'DIALOGUE.UNKNOWN_INTENT',
        `The intent '${name}' does not exist in the domain.`,
        { intent: name },
      );
    }
    return this.withOutput(conversationId, assistant, outputChannel, verbosity, (p, t, ch) =>
      p.triggerIntent(t, name, entities, ch),
    );
  }

  /** Op 8: runs the named action (deprecated in Rasa, still supported). */
  async execute(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
    outputChannel: unknown,
  ): Promise<JsonObject> {
    const assistant = this.assistants.require();
    const b = objectBody(body);
    const name = requiredName(b, 'action');
    // The `action` event's schema (Rasa's EVENTS_SCHEMA, as the replace-events route checks it):
    // `policy` a string or null, `confidence` a number or null.
    const policy = optionalField(b, 'policy', 'string');
    const confidence = optionalField(b, 'confidence', 'number');
    const verbosity = verbosityOf(includeEvents);
    if (!(await this.trackers.exists(conversationId))) {
      throw new DialogueError('TRACKER.CONVERSATION_NOT_FOUND', 'Conversation ID not found.');
    }
    return this.withOutput(conversationId, assistant, outputChannel, verbosity, (p, t, ch) =>
      p.executeAction(t, name, policy, confidence, ch),
    );
  }

  /** Op 10: the policies' scores for the next action (session start stored when due). */
  async predict(conversationId: string): Promise<JsonObject> {
    const assistant = this.assistants.require();
    if (!(await this.trackers.exists(conversationId))) {
      throw new DialogueError('TRACKER.CONVERSATION_NOT_FOUND', 'Conversation ID not found.');
    }
    const { tracker } = await this.turn(conversationId, assistant, null, null, () => undefined);
    return predictionBody(
      this.processor(assistant, () => this.clock.now()),
      tracker,
      true,
    );
  }

  /** Op 15: prediction on a tracker built from the posted events; nothing is stored or run. */
  predictOn(
    tracker: DialogueStateTracker,
    assistant: LoadedAssistant,
    verbosity: EventVerbosity,
  ): JsonObject | null {
    if (!assistant.policies) return null;
    return predictionBody(
      this.processor(assistant, () => this.clock.now()),
      tracker,
      false,
      verbosity,
    );
  }

  /** `execute_side_effects` of append events: bot messages sent, reminders scheduled. */
  async executeSideEffects(
    conversationId: string,
    events: readonly DialogueEvent[],
    outputChannel: unknown,
  ): Promise<void> {
    const channel = this.resolveOutput(outputChannel, null) ?? new CollectingOutputChannel();
    await this.sideEffects(conversationId, events, channel);
  }

  /** The processor of an assistant (one per turn: it carries the turn's clock). */
  processor(assistant: LoadedAssistant, now: () => number): DialogueProcessor {
    return new DialogueProcessor(assistant.domain, assistant.policies ?? null, {
      endpoint: this.endpoint,
      nlg: this.nlg,
      maxPredictions: this.config.dialogue.maxPredictions,
      now,
      warn: (message, data) => this.logger.warn(data ?? {}, message),
    });
  }

  private async withOutput(
    conversationId: string,
    assistant: LoadedAssistant,
    outputChannel: unknown,
    verbosity: EventVerbosity,
    work: (p: DialogueProcessor, t: DialogueStateTracker, channel: string | null) => Promise<void>,
  ): Promise<JsonObject> {
    let output: OutputChannel = new CollectingOutputChannel();
    const result = await this.turn(conversationId, assistant, null, null, async (p, t) => {
      output = this.resolveOutput(outputChannel, t) ?? new CollectingOutputChannel();
      await work(p, t, output.name);
    });
    await this.sideEffects(conversationId, result.events, output);
    const body: JsonObject = { tracker: result.tracker.currentState(verbosity) };
    if (output instanceof CollectingOutputChannel) body.messages = output.messages;
    return body;
  }

  /** Rasa's output channel resolution (`latest`, a registered channel name, else collect). */
  private resolveOutput(
    param: unknown,
    tracker: DialogueStateTracker | null,
  ): OutputChannel | null {
    if (typeof param !== 'string' || param === '') return null;
    const name = param === 'latest' ? (tracker?.latestInputChannel ?? null) : param;
    return name === null ? null : this.channels.resolve(name);
  }

  /** One locked, persisted turn. */
  async turn(
    senderId: string,
    assistant: LoadedAssistant,
    channelName: string | null,
    sessionMetadata: JsonObject | null,
    work: TurnWork,
  ): Promise<TurnResult> {
    let fresh: DialogueEvent[] = [];
    const tracker = await this.trackers.transact(senderId, assistant, async (t, now) => {
      const start = t.events.length;
      t.modelId = assistant.modelId;
      t.assistantId = assistant.assistantId;
      let last = now;
      const tick = (): number => {
        const current = Math.max(this.clock.now(), last + 0.000001);
        last = Math.round(current * 1e6) / 1e6;
        return last;
      };
      const stamp = { model_id: assistant.modelId, assistant_id: assistant.assistantId };
      if (needsSessionStart(t, assistant.domain, now)) {
        for (const e of startSession(t, assistant.domain, tick(), stamp, sessionMetadata)) {
          t.update(e);
          last = Math.max(last, e.timestamp);
        }
      }
      await work(this.processor(assistant, tick), t);
      void channelName;
      fresh = t.events.slice(start);
      return fresh;
    });
    return { tracker, events: fresh };
  }

  private async sideEffects(
    senderId: string,
    events: readonly DialogueEvent[],
    output: OutputChannel,
  ): Promise<void> {
    for (const e of events) {
      if (e.type === 'bot') {
        try {
          await output.sendResponse(senderId, botMessageOf(e));
        } catch (error) {
          this.logger.warn(
            { sender: senderId, channel: output.name, error: (error as Error).message },
            'could not send a bot message',
          );
        }
      } else if (e.type === 'reminder') {
        this.reminders.schedule(senderId, e, output.name);
      } else if (e.type === 'cancel_reminder') {
        this.reminders.cancel(senderId, e);
      }
    }
  }

  private async fireReminder(
    senderId: string,
    intent: string,
    entities: JsonObject[],
    scheduledAt: number,
    killOnUserMessage: boolean,
    outputChannel: string | null,
  ): Promise<void> {
    const assistant = this.assistants.current();
    if (assistant === null) return;
    let output: OutputChannel = new CollectingOutputChannel();
    const result = await this.turn(senderId, assistant, null, null, async (p, t) => {
      const applied = t.appliedEvents();
      if (
        killOnUserMessage &&
        applied.some((e) => e.type === 'user' && e.timestamp > scheduledAt)
      ) {
        return;
      }
      if (!assistant.domain.intents.includes(intent)) {
        this.logger.warn(
          { sender: senderId, intent },
          'reminder intent not in the domain; ignored',
        );
        return;
      }
      // Rasa's `handle_reminder` answers on the output channel of the turn that set the
      // reminder (e.g. `callback` of a trigger_intent with output_channel=callback, even before
      // any user message); when that one cannot send (the REST channel's collector), on the
      // channel of the latest user message.
      output = this.resolveOutput(outputChannel, t) ?? this.resolveOutput('latest', t) ?? output;
      await p.triggerIntent(t, intent, entities, output.name);
    });
    await this.sideEffects(senderId, result.events, output);
  }
}

function predictionBody(
  processor: DialogueProcessor,
  tracker: DialogueStateTracker,
  sorted: boolean,
  verbosity: EventVerbosity = EventVerbosity.AFTER_RESTART,
): JsonObject {
  const prediction = processor.predict(tracker);
  if (prediction === null) {
    throw new DialogueError(
      'DIALOGUE.NO_CORE_MODEL',
      'The loaded model has no dialogue policies (NLU-only model); cannot predict the next action.',
    );
  }
  const names = processor.domain.actionNamesOrTexts;
  const scores = names.map((action, i) => ({ action, score: prediction.probabilities[i] ?? 0 }));
  if (sorted) {
    scores.sort((a, b) =>
      b.score !== a.score
        ? b.score - a.score
        : a.action < b.action
          ? -1
          : a.action > b.action
            ? 1
            : 0,
    );
  }
  return {
    scores,
    policy: prediction.policyName,
    confidence: prediction.maxConfidence,
    tracker: tracker.currentState(verbosity),
  };
}

/** `b.name` as a non-empty string, else Rasa's "Name of the <kind> not provided" failure. */
function requiredName(b: Record<string, unknown>, kind: 'intent' | 'action'): string {
  const name = b.name;
  if (typeof name !== 'string' || name === '') {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `Name of the ${kind} not provided in request body.`,
      { parameter: 'name', in: 'body' },
    );
  }
  return name;
}

/** `b[key]` when it is of `type`, null when absent or null; any other value is a 400. */
function optionalField<T extends 'string' | 'number'>(
  b: Record<string, unknown>,
  key: string,
  type: T,
): (T extends 'string' ? string : number) | null {
  const value = b[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `"${key}" must be a ${type === 'number' ? 'number' : 'string'} or null.`,
      { parameter: key, in: 'body' },
    );
  }
  return value as T extends 'string' ? string : number;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      'The request body must be a JSON object.',
      {
        parameter: 'body',
        in: 'body',
      },
    );
  }
  return body as Record<string, unknown>;
}

function entityList(value: unknown): JsonObject[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    // Each listed entity as the `user` event's entity schema has it: an `entity` name and a value.
    if (
      !value.every(
        (e) =>
          typeof e === 'object' &&
          e !== null &&
          !Array.isArray(e) &&
          typeof (e as JsonObject).entity === 'string' &&
          'value' in e,
      )
    ) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        '"entities" must be an object or a list of entity objects ({"entity": name, "value": value}).',
        {
          parameter: 'entities',
          in: 'body',
        },
      );
    }
    return value as JsonObject[];
  }
  if (typeof value === 'object') {
    return Object.entries(value as JsonObject).map(([entity, v]) => ({ entity, value: v }));
  }
  throw new DialogueError(
    'REQUEST.INVALID_PARAMETER',
    '"entities" must be an object or a list of entity objects.',
    {
      parameter: 'entities',
      in: 'body',
    },
  );
}

function verbosityOf(value: unknown): EventVerbosity {
  return verbosityParam(value);
}
