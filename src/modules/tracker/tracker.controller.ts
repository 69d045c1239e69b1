import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Optional,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { validConversationIdOf } from 'src/platform/http/conversation-id';
import { boolParam, floatParam } from './query-params';
import { TrackerSideEffects } from './side-effects';
import { TrackerService, type TrackerState } from './tracker.service';

/** Rasa's tracker routes (operations 3–7 and 11). Auth runs first (global guard). */
@Controller('conversations')
export class TrackerController {
  constructor(
    private readonly trackers: TrackerService,
    @Optional() private readonly sideEffects?: TrackerSideEffects,
  ) {}

  @Get('*conversationId/tracker')
  getTracker(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('until') until: unknown,
  ): Promise<TrackerState> {
    return this.trackers.getTracker(id(req), includeEvents, floatParam(until));
  }

  @Delete('*conversationId/tracker')
  @HttpCode(204)
  async deleteTracker(@Req() req: Request): Promise<void> {
    await this.trackers.deleteTracker(id(req));
  }

  @Post('*conversationId/tracker/events')
  @HttpCode(200)
  async appendEvents(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('execute_side_effects') executeSideEffects: unknown,
    @Query('output_channel') outputChannel: unknown,
  ): Promise<TrackerState> {
    const body: unknown = req.body;
    const state = await this.trackers.appendEvents(id(req), body, includeEvents);
    if (boolParam(executeSideEffects, false) && this.sideEffects) {
      await this.sideEffects.execute(id(req), body, outputChannel);
    }
    return state;
  }

  @Put('*conversationId/tracker/events')
  replaceEvents(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
  ): Promise<TrackerState> {
    const body: unknown = req.body;
    return this.trackers.replaceEvents(id(req), body, includeEvents);
  }

  @Get('*conversationId/story')
  async getStory(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Query('until') until: unknown,
    @Query('all_sessions') allSessions: unknown,
  ): Promise<string> {
    const story = await this.trackers.getStory(
      id(req),
      floatParam(until),
      boolParam(allSessions, false),
    );
    res.type('text/plain; charset=utf-8');
    return story;
  }

  @Post('*conversationId/messages')
  @HttpCode(200)
  addMessage(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
  ): Promise<TrackerState> {
    const body: unknown = req.body;
    return this.trackers.addMessage(id(req), body, includeEvents);
  }
}

/** The conversation id of the path, checked against the id rules (400 otherwise). */
function id(req: Request): string {
  return validConversationIdOf(req);
}
