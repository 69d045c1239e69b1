import { Controller, HttpCode, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { type JsonObject } from 'src/core';
import { validConversationIdOf } from 'src/platform/http/conversation-id';
import { DialogueService } from './dialogue.service';

/** Rasa's dialogue routes on a conversation: operations 8 (execute), 9 (trigger_intent), 10 (predict). */
@Controller('conversations')
export class ConversationDialogueController {
  constructor(private readonly dialogue: DialogueService) {}

  @Post('*conversationId/execute')
  @HttpCode(200)
  execute(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('output_channel') outputChannel: unknown,
  ): Promise<JsonObject> {
    return this.dialogue.execute(id(req), req.body as unknown, includeEvents, outputChannel);
  }

  @Post('*conversationId/trigger_intent')
  @HttpCode(200)
  triggerIntent(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('output_channel') outputChannel: unknown,
  ): Promise<JsonObject> {
    return this.dialogue.triggerIntent(id(req), req.body as unknown, includeEvents, outputChannel);
  }

  @Post('*conversationId/predict')
  @HttpCode(200)
  predict(@Req() req: Request): Promise<JsonObject> {
    return this.dialogue.predict(id(req));
  }
}

/** The conversation id of the path, checked against the id rules (400 otherwise). */
function id(req: Request): string {
  return validConversationIdOf(req);
}
