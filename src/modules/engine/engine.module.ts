import {
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import {
  AssistantSource,
  Clock,
  ConversationReader,
  ConversationRuntime,
  LockStore,
  MessageHandler,
  NoTracing,
  OutputChannelDirectory,
  OutputDelivery,
  ReminderPoller,
  ReminderScheduler,
  ReminderStore,
  SystemClock,
  Tracer,
  TrackerStore,
  TrackerStreamHub,
  type RuntimeLog,
} from 'src/core';
import { ModelModule } from 'src/modules/model';
import {
  createOtelTracer,
  instrumentActionServer,
  instrumentTrackerStore,
  OtelTracer,
  PrometheusTurnObserver,
} from 'src/modules/observability';
import { RemindersModule } from 'src/modules/reminders';
import { EventOutbox, TrackerModule } from 'src/modules/tracker';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { PARLEY_VERSION } from 'src/platform/config/version';
import { ReadinessChecks } from 'src/platform/health/readiness-checks';
import { traceHeaders } from 'src/platform/http/trace-context';
import { actionServerMetrics } from './action-server-metrics';
import { readDialogueEndpoints, type DialogueEndpoints } from './endpoints';

/** endpoints.yml's dialogue entries, read once at start. */
const DIALOGUE_ENDPOINTS = Symbol('DIALOGUE_ENDPOINTS');
type EngineEndpoints = Pick<DialogueEndpoints, 'action' | 'nlg' | 'tracing'>;

/**
 * Runs this instance's ReminderPoller while the application runs: it starts once every module
 * is ready, and stops (waiting for the reminders being fired) before the database closes.
 */
@Injectable()
export class ReminderPolling implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(ReminderPoller) private readonly poller: ReminderPoller) {}

  onApplicationBootstrap(): void {
    this.poller.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.poller.stop();
  }
}

/**
 * The composition root: builds the one ConversationRuntime of the process from the ports —
 * the tracker store and lock store (TrackerModule), the served model (ModelModule's
 * AssistantSource), the
 * output channel directory, the clock — and its turn listeners (output delivery, reminders),
 * and this instance's ReminderPoller over the shared ReminderStore (RemindersModule),
 * with the action server and NLG server of endpoints.yml. Every route and channel that changes
 * a conversation gets the runtime (or its MessageHandler / ConversationReader face) from here.
 */
@Module({
  imports: [TrackerModule, ModelModule, RemindersModule],
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: DIALOGUE_ENDPOINTS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => readEndpoints(config, runtimeLog('Conversations')),
    },
    {
      provide: Tracer,
      inject: [DIALOGUE_ENDPOINTS],
      useFactory: (endpoints: EngineEndpoints): Tracer => {
        if (endpoints.tracing === null) return new NoTracing();
        new Logger('Tracing').log(
          { url: endpoints.tracing.url, serviceName: endpoints.tracing.serviceName },
          'exporting traces (OTLP over HTTP)',
        );
        return createOtelTracer(endpoints.tracing);
      },
    },
    { provide: OutputChannelDirectory, useValue: new OutputChannelDirectory() },
    {
      provide: ReminderScheduler,
      useFactory: () => new ReminderScheduler(runtimeLog('Reminders')),
    },
    {
      provide: ReminderPoller,
      inject: [
        ReminderStore,
        ReminderScheduler,
        ConversationRuntime,
        AssistantSource,
        LockStore,
        APP_CONFIG,
      ],
      useFactory: (
        store: ReminderStore,
        scheduler: ReminderScheduler,
        runtime: ConversationRuntime,
        assistants: AssistantSource,
        locks: LockStore,
        config: AppConfig,
      ): ReminderPoller => {
        // No more reminders at a time than the lock lets this process run: the others stay in
        // the table for the next free slot or another instance.
        const maxInFlight = ReminderPoller.maxInFlightUnder(locks);
        const poller = new ReminderPoller(
          store,
          (due) => runtime.fireReminder(due),
          runtimeLog('Reminders'),
          { sweepMs: config.reminders.pollMs, leaseMs: config.reminders.leaseMs, maxInFlight },
          // Reminders that survived a restart wait for the model instead of firing into none.
          () => assistants.current() !== null,
        );
        scheduler.onScheduled((at) => poller.wake(at));
        return poller;
      },
    },
    ReminderPolling,
    // The development inspector's tracker_stream: a turn listener only with --inspect.
    { provide: TrackerStreamHub, useFactory: () => new TrackerStreamHub(runtimeLog('Inspector')) },
    {
      provide: ConversationRuntime,
      inject: [
        TrackerStore,
        LockStore,
        Clock,
        AssistantSource,
        OutputChannelDirectory,
        ReminderScheduler,
        APP_CONFIG,
        DIALOGUE_ENDPOINTS,
        Tracer,
        TrackerStreamHub,
      ],
      useFactory: (
        store: TrackerStore,
        locks: LockStore,
        clock: Clock,
        assistants: AssistantSource,
        outputs: OutputChannelDirectory,
        reminders: ReminderScheduler,
        config: AppConfig,
        endpoints: EngineEndpoints,
        tracer: Tracer,
        inspector: TrackerStreamHub,
      ): ConversationRuntime => {
        const log = runtimeLog('Conversations');
        const runtime = new ConversationRuntime({
          store: instrumentTrackerStore(store, tracer),
          locks,
          clock,
          assistants,
          outputs,
          listeners: config.inspect
            ? [new OutputDelivery(log), reminders, inspector]
            : [new OutputDelivery(log), reminders],
          log,
          tracer,
          observer: new PrometheusTurnObserver(),
          options: {
            maxPredictions: config.dialogue.maxPredictions,
            maxTextLength: config.http.maxTextLength,
            cacheSize: config.trackerCacheSize,
            cacheBytes: config.trackerCacheBytes,
            actionEndpoint:
              endpoints.action === null ? null : instrumentActionServer(endpoints.action, tracer),
            nlg: endpoints.nlg,
          },
        });
        inspector.attachReader((id) => runtime.sessionState(id));
        return runtime;
      },
    },
    { provide: MessageHandler, useExisting: ConversationRuntime },
    { provide: ConversationReader, useExisting: ConversationRuntime },
  ],
  exports: [
    ConversationRuntime,
    TrackerStreamHub,
    MessageHandler,
    ConversationReader,
    OutputChannelDirectory,
    Tracer,
  ],
})
export class EngineModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(Tracer) private readonly tracer: Tracer,
    @Inject(LockStore) private readonly locks: LockStore,
    @Inject(ReadinessChecks) private readonly readiness: ReadinessChecks,
    @Inject(EventOutbox) private readonly outbox: EventOutbox,
  ) {}

  /**
   * Readiness: the lock store takes and releases a lock (a round trip to its backend). The
   * outbox traces with the turns' tracer (its rows link the relay's publish to the turns).
   */
  onModuleInit(): void {
    this.outbox.useTracer(this.tracer);
    this.readiness.register(
      'lock_store',
      () => this.locks.withLock(READINESS_LOCK_ID, () => Promise.resolve()),
      { critical: true },
    );
  }

  /** Last: the spans of the final turns are exported before the process exits. */
  async onApplicationShutdown(): Promise<void> {
    if (this.tracer instanceof OtelTracer) await this.tracer.shutdown();
  }
}

/** The conversation id the readiness check locks for an instant. */
const READINESS_LOCK_ID = 'parley:readiness-probe';

/** The runtime's log on the application's structured logger. */
function runtimeLog(context: string): RuntimeLog {
  const logger = new Logger(context);
  return {
    info: (message, data) => logger.log(data ?? {}, message),
    warn: (message, data) => logger.warn(data ?? {}, message),
    error: (message, data) => logger.error(data ?? {}, message),
  };
}

async function readEndpoints(config: AppConfig, log: RuntimeLog): Promise<EngineEndpoints> {
  const file = config.files.endpoints;
  if (file === null) return { action: null, nlg: null, tracing: null };
  const endpoints = await readDialogueEndpoints(
    file,
    PARLEY_VERSION,
    config.dialogue.actionTimeoutMs,
    {
      circuit: config.dialogue.actionCircuit,
      observer: actionServerMetrics(),
      contextHeaders: traceHeaders,
    },
  );
  for (const warning of endpoints.warnings) log.warn(warning, { file });
  if (endpoints.action !== null) {
    log.info('custom action server configured', {
      url: endpoints.action.target,
      timeoutMs: config.dialogue.actionTimeoutMs,
      circuitBreaker: config.dialogue.actionCircuit !== null,
    });
    if (config.dialogue.actionTimeoutMs >= config.lockStore.lockTimeoutMs) {
      log.warn(
        'ACTION_SERVER_TIMEOUT_MS is not below LOCK_TIMEOUT_MS: a hung action server can outlive the conversation lock',
        {
          actionTimeoutMs: config.dialogue.actionTimeoutMs,
          lockTimeoutMs: config.lockStore.lockTimeoutMs,
        },
      );
    }
  }
  if (endpoints.nlg !== null) {
    log.info('NLG server configured (responses come from it)', { url: endpoints.nlg.config.url });
  }
  return { action: endpoints.action, nlg: endpoints.nlg, tracing: endpoints.tracing };
}
