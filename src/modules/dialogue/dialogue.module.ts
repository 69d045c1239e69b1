import { Module } from '@nestjs/common';
import { EngineModule } from 'src/modules/engine';
import { RestWebhookController } from './rest-webhook.controller';

/** Rasa's `rest` channel. */
@Module({ imports: [EngineModule], controllers: [RestWebhookController] })
export class DialogueModule {}
