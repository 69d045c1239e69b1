// The only barrel of the core: its public API. Explicit names only (no `export *`).

export {
  CollectingOutputChannel,
  OutputChannel,
  type BotMessage,
} from 'src/core/channels/output-channel';
export { DEFAULT_SENDER_ID, type UserMessage } from 'src/core/channels/user-message';
export {
  Domain,
  type EntityDefinition,
  type IntentDefinition,
  type SessionConfig,
} from 'src/core/domain/domain';
export {
  ACTION_LISTEN_NAME,
  ACTION_RESTART_NAME,
  ACTION_SESSION_START_NAME,
  DEFAULT_ACTION_NAMES,
  DEFAULT_INTENTS,
  LATEST_TRAINING_DATA_FORMAT_VERSION,
  REQUESTED_SLOT,
  SESSION_START_METADATA_SLOT,
} from 'src/core/domain/domain-constants';
export {
  mergeDomainDocuments,
  readDomainPath,
  type DomainSource,
} from 'src/core/domain/domain-files';
export { type SlotDefinition } from 'src/core/domain/slot-definition';
export {
  DialogueError,
  RETRY_AFTER_DETAIL,
  type DialogueErrorCode,
} from 'src/core/errors/dialogue-error';
export {
  actionExecuted,
  type ActionExecuted,
  type ActionExecutedInit,
} from 'src/core/events/action-executed';
export {
  actionExecutionRejected,
  type ActionExecutionRejected,
} from 'src/core/events/action-execution-rejected';
export { actionReverted, type ActionReverted } from 'src/core/events/action-reverted';
export { activeLoop, type ActiveLoop } from 'src/core/events/active-loop';
export { agentCancelled, type AgentCancelled } from 'src/core/events/agent-cancelled';
export { agentCompleted, type AgentCompleted } from 'src/core/events/agent-completed';
export { agentInterrupted, type AgentInterrupted } from 'src/core/events/agent-interrupted';
export { agentResumed, type AgentResumed } from 'src/core/events/agent-resumed';
export { agentStarted, type AgentStarted } from 'src/core/events/agent-started';
export { agentUttered, type AgentUttered } from 'src/core/events/agent-uttered';
export { allSlotsReset, type AllSlotsReset } from 'src/core/events/all-slots-reset';
export { botUttered, type BotUttered } from 'src/core/events/bot-uttered';
export { conversationPaused, type ConversationPaused } from 'src/core/events/conversation-paused';
export {
  conversationResumed,
  type ConversationResumed,
} from 'src/core/events/conversation-resumed';
export {
  definePrevUserUtteredFeaturization,
  type DefinePrevUserUtteredFeaturization,
} from 'src/core/events/define-prev-user-uttered-featurization';
export {
  EVENT_NAMES,
  withMetadata,
  withTimestamp,
  type DialogueEvent,
  type DialogueEventOf,
  type DialogueEventType,
} from 'src/core/events/dialogue-event';
export {
  dialogueStackUpdated,
  type DialogueStackUpdated,
} from 'src/core/events/dialogue-stack-updated';
export { encodeEvent, encodeWireEvent, type EncodedEvent } from 'src/core/events/encoded-event';
export { entitiesAdded, type EntitiesAdded } from 'src/core/events/entities-added';
export { errorHandled, type ErrorHandled } from 'src/core/events/error-handled';
export { type EventBase, type EventBaseInit, type JsonObject } from 'src/core/events/event-base';
export {
  deserializeEvent,
  deserializeEvents,
  serializeEvent,
  serializeEvents,
} from 'src/core/events/event-codec';
export {
  EVENTS_FORMAT_ERROR_PREFIX,
  validateEventsPayload,
  type ValidateEventsResult,
} from 'src/core/events/event-schema';
export { EVENTS_SCHEMA } from 'src/core/events/events-json-schema';
export { flowCancelled, type FlowCancelled } from 'src/core/events/flow-cancelled';
export { flowCompleted, type FlowCompleted } from 'src/core/events/flow-completed';
export { flowInterrupted, type FlowInterrupted } from 'src/core/events/flow-interrupted';
export { flowResumed, type FlowResumed } from 'src/core/events/flow-resumed';
export { flowStarted, type FlowStarted } from 'src/core/events/flow-started';
export { followupAction, type FollowupAction } from 'src/core/events/followup-action';
export { loopInterrupted, type LoopInterrupted } from 'src/core/events/loop-interrupted';
export { reminderCancelled, type ReminderCancelled } from 'src/core/events/reminder-cancelled';
export { reminderScheduled, type ReminderScheduled } from 'src/core/events/reminder-scheduled';
export { restarted, type Restarted } from 'src/core/events/restarted';
export {
  routingSessionEnded,
  type RoutingSessionEnded,
} from 'src/core/events/routing-session-ended';
export { type SerializedEvent } from 'src/core/events/serialized-event';
export { sessionEnded, type SessionEnded } from 'src/core/events/session-ended';
export { sessionStarted, type SessionStarted } from 'src/core/events/session-started';
export { slotSet, type SlotSet } from 'src/core/events/slot-set';
export { storyExported, type StoryExported } from 'src/core/events/story-exported';
export {
  userUtteranceReverted,
  type UserUtteranceReverted,
} from 'src/core/events/user-utterance-reverted';
export {
  EXTERNAL_MESSAGE_PREFIX,
  IS_EXTERNAL,
  externalUserUttered,
  fullRetrievalIntentNameOf,
  intentNameOf,
  userUttered,
  type UserUttered,
  type UserUtteredInit,
} from 'src/core/events/user-uttered';
export { parseWithRegex, type RegexParseData } from 'src/core/interpreter/regex-interpreter';
export {
  InMemoryLockStore,
  type InMemoryLockStoreOptions,
} from 'src/core/locking/in-memory-lock-store';
export { Clock, SystemClock } from 'src/core/ports/clock';
export {
  LockStore,
  NO_LEASE,
  type HandedOverEvents,
  type LockLease,
} from 'src/core/ports/lock-store';
export { MessageHandler } from 'src/core/ports/message-handler';
export { ModelPersistor, remoteModelKey } from 'src/core/ports/model-persistor';
export { NoTracing, Tracer, type SpanAttributes, type TraceSpan } from 'src/core/ports/tracer';
export {
  TrackerStore,
  type RetrieveOptions,
  type StoreVersion,
  type VersionedEvents,
} from 'src/core/ports/tracker-store';
export {
  hasSessionExpired,
  needsSessionStart,
  sessionStartEvents,
  slotsToCarryOver,
  startSession,
  type SessionStartOptions,
} from 'src/core/session/session-start';
export { formatMessage } from 'src/core/story/message-annotation';
export { writeTestStories } from 'src/core/story/story-writer';
export {
  conversationAsTestCase,
  writeTestCases,
  type TestCaseJson,
} from 'src/core/story/test-case-writer';
export { FixedClock } from 'src/core/testing/fixed-clock';
export { InMemoryTrackerStore } from 'src/core/testing/in-memory-tracker-store';
export { appliedEvents } from 'src/core/tracker/applied-events';
export {
  DialogueStateTracker,
  type LatestAction,
  type TrackerActiveLoop,
} from 'src/core/tracker/dialogue-state-tracker';
export { EventVerbosity, parseEventVerbosity } from 'src/core/tracker/event-verbosity';
export { applyJsonPatch } from 'src/core/tracker/json-patch';
export { isSessionStartAction, splitSessions } from 'src/core/tracker/sessions';
// Dialogue engine.
export {
  ActionExecutionRejection,
  ActionServerError,
  type Action,
  type ActionContext,
} from 'src/core/actions/action';
export {
  DEFAULT_CIRCUIT,
  type ActionCallOutcome,
  type ActionServerObserver,
  type CircuitOptions,
  type CircuitStateName,
} from 'src/core/actions/action-circuit';
export { actionFor } from 'src/core/actions/action-registry';
export { botMessageOf, fillTemplate, generateResponse } from 'src/core/actions/nlg';
export {
  NlgServer,
  renderResponse,
  type NlgEndpointConfig,
  type ResponseGenerator,
} from 'src/core/actions/nlg-server';
export {
  ActionEndpoint,
  DEFAULT_ACTION_TIMEOUT_MS,
  RemoteAction,
  type ActionEndpointConfig,
  type ActionEndpointOptions,
  type ActionServerResponse,
} from 'src/core/actions/remote-action';
export { extractSlots } from 'src/core/actions/slot-extraction';
export {
  activeState,
  stateKey,
  trackerStates,
  type DialogueState,
} from 'src/core/dialogue/dialogue-state';
export { trainingTrackers, type TrainingTracker } from 'src/core/dialogue/story-graph';
export { PER_TOKEN_PARSE_KEYS, storedParseData } from 'src/core/events/json-values';
export {
  DEFAULT_STREAM_LIMITS,
  StreamClose,
  TrackerStreamHub,
  type SessionStateReader,
  type StreamClient,
  type StreamConnection,
  type TrackerStreamLimits,
} from 'src/core/inspector/tracker-stream';
export { type PolicyPrediction } from 'src/core/policies/policy';
export {
  DEFAULT_POLICIES,
  PolicyEnsemble,
  type EnsemblePrediction,
} from 'src/core/policies/policy-ensemble';
export {
  Anonymizer,
  SUBSTITUTIONS,
  mask,
  parseAnonymizationConfig,
  type AnonymizationConfig,
  type AnonymizationRule,
  type AnonymizationRuleList,
  type Substitution,
} from 'src/core/privacy/anonymizer';
export { FAKER_TYPES, fakeValue } from 'src/core/privacy/fake-values';
export {
  RECOGNIZED_TYPES,
  ibanValid,
  luhnValid,
  recognize,
  type PiiSpan,
} from 'src/core/privacy/recognizers';
export {
  DEFAULT_MAX_NUMBER_OF_PREDICTIONS,
  DialogueProcessor,
  type ActionPrediction,
  type ParsedUserMessage,
  type ProcessorOptions,
} from 'src/core/processor/dialogue-processor';
export {
  evaluateStories,
  type EvaluatedAction,
  type StoryEvaluation,
  type StoryOutcome,
} from 'src/core/processor/story-evaluation';
export { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
export { AssistantSource, type LoadedAssistant } from 'src/core/runtime/assistant-source';
export {
  type AddMessageCommand,
  type AppendEventsCommand,
  type ExecuteActionCommand,
  type OutputChannelName,
  type ReplaceEventsCommand,
  type StoryQuery,
  type TestCaseQuery,
  type TrackerQuery,
  type TriggerIntentCommand,
} from 'src/core/runtime/commands';
export {
  MAX_CONVERSATION_ID_LENGTH,
  conversationIdProblem,
  requireConversationId,
} from 'src/core/runtime/conversation-id';
export { ConversationReader } from 'src/core/runtime/conversation-reader';
export {
  ConversationRuntime,
  conversationNotFound,
  type RuntimeDependencies,
  type RuntimeOptions,
  type TrackerState,
  type TurnAnswer,
} from 'src/core/runtime/conversation-runtime';
export { InMemoryReminderStore } from 'src/core/runtime/in-memory-reminder-store';
export { parseForModelRoute, type ModelParseAnswer } from 'src/core/runtime/model-parse';
export {
  OutputChannelDirectory,
  type OutputChannelFactory,
} from 'src/core/runtime/output-channel-directory';
export { OutputDelivery } from 'src/core/runtime/output-delivery';
export {
  parseText,
  parseTextAwaitable,
  storyTextParser,
  type ParseData,
} from 'src/core/runtime/parse-text';
export {
  NO_REMINDER_CHANGES,
  noReminderChanges,
  reminderChanges,
  reminderRecord,
  setsKillableReminder,
  type ReminderChanges,
  type ReminderTurn,
} from 'src/core/runtime/reminder-changes';
export {
  DEFAULT_POLLER_OPTIONS,
  ReminderPoller,
  type ReminderPollerOptions,
} from 'src/core/runtime/reminder-poller';
export {
  ReminderScheduler,
  entityList,
  type DueReminder,
} from 'src/core/runtime/reminder-scheduler';
export {
  ReminderStore,
  cancels,
  entitiesKey,
  type ClaimedReminder,
  type ReminderMatch,
  type ReminderRecord,
} from 'src/core/runtime/reminder-store';
export {
  MEMORY_PER_JSON_CHAR,
  SessionCache,
  estimateJsonSize,
  type CachedSession,
} from 'src/core/runtime/session-cache';
export { TurnListener, type CommittedTurn, type RuntimeLog } from 'src/core/runtime/turn-listener';
export { TurnObserver, type TurnOutcome, type TurnStart } from 'src/core/runtime/turn-observer';
export {
  DEFAULT_MAX_TEXT_LENGTH,
  requireUserEventTexts,
  requireUserText,
} from 'src/core/runtime/user-text';
export {
  hasStoriesOrRules,
  readStoriesYaml,
  type StoryBlock,
} from 'src/core/training-data/stories-yaml-reader';
export {
  NULL_UUID,
  isUuid,
  type MediaFormat,
  type OpenParameters,
} from 'src/core/voice/audiohook-protocol';
export {
  AudioHookSession,
  type AudioHookListener,
  type AudioHookLogger,
  type AudioHookTransport,
} from 'src/core/voice/audiohook-session';
export { EnergyVad, type VadEvent } from 'src/core/voice/energy-vad';
export {
  verifyHttpSignature,
  type SignatureResult,
  type SignedRequest,
} from 'src/core/voice/http-signature';
export { buildJsgf } from 'src/core/voice/jsgf-grammar';
export { MULAW_SILENCE, mulawDecode, mulawEncode, mulawSilence } from 'src/core/voice/mulaw';
export { NonceCache } from 'src/core/voice/nonce-cache';
export { resample, upsample2x } from 'src/core/voice/resample';
export {
  type RecognitionEvent,
  type SpeechRecognizer,
  type SpeechSynthesizer,
} from 'src/core/voice/speech-engines';
export {
  VoiceCall,
  VoiceOutputChannel,
  countWords,
  type CallSession,
  type TurnLatency,
} from 'src/core/voice/voice-call';
export {
  VoiceConfigError,
  parseVoiceConnectorConfig,
  type VoiceConnectorConfig,
} from 'src/core/voice/voice-config';
export { encodeWav, parseWav } from 'src/core/voice/wav';
