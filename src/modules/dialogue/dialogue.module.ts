import { DynamicModule, Global, Module } from '@nestjs/common';
import { MessageHandler, OutputChannelDirectory } from 'src/core';
import { ModelModule } from 'src/modules/model';
import { TrackerSideEffects } from 'src/modules/tracker/side-effects';
import { type AppConfig } from 'src/platform/config/app-config';
import { ConversationDialogueController } from './conversation-dialogue.controller';
import { DialogueService } from './dialogue.service';
import { ModelDialogueController } from './model-dialogue.controller';
import { ReminderScheduler } from './reminder.scheduler';
import { RestWebhookController } from './rest-webhook.controller';
import { DialogueSideEffects } from './side-effects.service';

/**
 * The dialogue engine as a Nest module: the message loop (MessageHandler, injected by every
 * channel), the output-channel registry for `output_channel`, reminders, the dialogue routes
 * (execute, trigger_intent, predict, model/predict, model/test/stories) and the `rest` channel.
 */
@Global()
@Module({})
export class DialogueModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DialogueModule,
      imports: [ModelModule],
      controllers: [
        RestWebhookController,
        ...(config.http.enableApi ? [ConversationDialogueController, ModelDialogueController] : []),
      ],
      providers: [
        DialogueService,
        OutputChannelDirectory,
        ReminderScheduler,
        { provide: MessageHandler, useExisting: DialogueService },
        { provide: TrackerSideEffects, useClass: DialogueSideEffects },
      ],
      exports: [DialogueService, MessageHandler, OutputChannelDirectory, TrackerSideEffects],
    };
  }
}
