import { Controller, HttpCode, Inject, Post, Query, Req, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { ConversationRuntime, type JsonObject, type TurnAnswer } from 'src/core';
import { ModelLoadedGuard } from 'src/modules/model';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { validConversationIdOf } from 'src/platform/http/conversation-id';
import { executeActionCommand, triggerIntentCommand } from './commands';

/** Rasa's dialogue routes on a conversation: execute, trigger_intent, predict. */
@Controller('conversations')
@UseGuards(ModelLoadedGuard)
export class ConversationDialogueController {
  constructor(
    private readonly runtime: ConversationRuntime,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('*conversationId/execute')
  @HttpCode(200)
  execute(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('output_channel') outputChannel: unknown,
  ): Promise<TurnAnswer> {
    const params = { conversationId: validConversationIdOf(req), includeEvents, outputChannel };
    return this.runtime.execute(executeActionCommand(params, req.body as unknown));
  }

  @Post('*conversationId/trigger_intent')
  @HttpCode(200)
  triggerIntent(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('output_channel') outputChannel: unknown,
  ): Promise<TurnAnswer> {
    const params = { conversationId: validConversationIdOf(req), includeEvents, outputChannel };
    const body: unknown = req.body;
    return this.runtime.triggerIntent(
      triggerIntentCommand(params, body, this.config.http.maxTextLength),
    );
  }

  @Post('*conversationId/predict')
  @HttpCode(200)
  predict(@Req() req: Request): Promise<JsonObject> {
    return this.runtime.predict(validConversationIdOf(req));
  }
}
