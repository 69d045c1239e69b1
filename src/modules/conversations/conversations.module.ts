import { DynamicModule, Module } from '@nestjs/common';
import { EngineModule } from 'src/modules/engine';
import { IdempotencyModule } from 'src/modules/idempotency';
import { ModelModule } from 'src/modules/model';
import { type AppConfig } from 'src/platform/config/app-config';
import { ConversationDialogueController } from './conversation-dialogue.controller';
import { ModelDialogueController } from './model-dialogue.controller';
import { TrackerController } from './tracker.controller';

/**
 * Rasa's conversation routes (`--enable-api`): the tracker, the dialogue
 * routes (execute, trigger_intent, predict) and the model's dialogue routes (`/model/predict`,
 * `/model/test/stories`). Controllers parse each request into a typed command and hand it to
 * the ConversationRuntime; they hold no state of their own.
 */
@Module({})
export class ConversationsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConversationsModule,
      imports: [EngineModule, ModelModule, IdempotencyModule],
      controllers: config.http.enableApi
        ? [TrackerController, ConversationDialogueController, ModelDialogueController]
        : [],
    };
  }
}
