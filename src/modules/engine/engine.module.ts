import { Inject, Logger, Module, OnModuleDestroy } from '@nestjs/common';
import {
  AssistantSource,
  Clock,
  ConversationReader,
  ConversationRuntime,
  LockStore,
  MessageHandler,
  OutputChannelDirectory,
  OutputDelivery,
  ReminderScheduler,
  SystemClock,
  TrackerStore,
  type RuntimeLog,
} from 'src/core';
import { ModelModule } from 'src/modules/model';
import { TrackerModule } from 'src/modules/tracker';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { PARLEY_VERSION } from 'src/platform/config/version';
import { readDialogueEndpoints, type DialogueEndpoints } from './endpoints';

/**
 * The composition root: builds the one ConversationRuntime of the process from the ports —
 * the tracker store and lock store (TrackerModule), the served model (ModelModule's
 * AssistantSource), the
 * output channel directory, the clock — and its turn listeners (output delivery, reminders),
 * with the action server and NLG server of endpoints.yml. Every route and channel that changes
 * a conversation gets the runtime (or its MessageHandler / ConversationReader face) from here.
 */
@Module({
  imports: [TrackerModule, ModelModule],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: OutputChannelDirectory, useValue: new OutputChannelDirectory() },
    {
      provide: ReminderScheduler,
      useFactory: () => new ReminderScheduler(runtimeLog('Reminders')),
    },
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
      ],
      useFactory: async (
        store: TrackerStore,
        locks: LockStore,
        clock: Clock,
        assistants: AssistantSource,
        outputs: OutputChannelDirectory,
        reminders: ReminderScheduler,
        config: AppConfig,
      ): Promise<ConversationRuntime> => {
        const log = runtimeLog('Conversations');
        const endpoints = await readEndpoints(config, log);
        const runtime = new ConversationRuntime({
          store,
          locks,
          clock,
          assistants,
          outputs,
          listeners: [new OutputDelivery(log), reminders],
          log,
          options: {
            maxPredictions: config.dialogue.maxPredictions,
            maxTextLength: config.http.maxTextLength,
            cacheSize: config.trackerCacheSize,
            cacheBytes: config.trackerCacheBytes,
            actionEndpoint: endpoints.action,
            nlg: endpoints.nlg,
          },
        });
        reminders.onDue((due) => runtime.fireReminder(due));
        return runtime;
      },
    },
    { provide: MessageHandler, useExisting: ConversationRuntime },
    { provide: ConversationReader, useExisting: ConversationRuntime },
  ],
  exports: [ConversationRuntime, MessageHandler, ConversationReader, OutputChannelDirectory],
})
export class EngineModule implements OnModuleDestroy {
  constructor(@Inject(ReminderScheduler) private readonly reminders: ReminderScheduler) {}

  onModuleDestroy(): void {
    this.reminders.close();
  }
}

/** The runtime's log on the application's structured logger. */
function runtimeLog(context: string): RuntimeLog {
  const logger = new Logger(context);
  return {
    info: (message, data) => logger.log(data ?? {}, message),
    warn: (message, data) => logger.warn(data ?? {}, message),
    error: (message, data) => logger.error(data ?? {}, message),
  };
}

async function readEndpoints(
  config: AppConfig,
  log: RuntimeLog,
): Promise<Pick<DialogueEndpoints, 'action' | 'nlg'>> {
  const file = config.files.endpoints;
  if (file === null) return { action: null, nlg: null };
  const endpoints = await readDialogueEndpoints(
    file,
    PARLEY_VERSION,
    config.dialogue.actionTimeoutMs,
  );
  for (const warning of endpoints.warnings) log.warn(warning, { file });
  if (endpoints.action !== null) {
    log.info('custom action server configured', { url: endpoints.action.config.url });
  }
  if (endpoints.nlg !== null) {
    log.info('NLG server configured (responses come from it)', { url: endpoints.nlg.config.url });
  }
  return { action: endpoints.action, nlg: endpoints.nlg };
}
