import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Post,
  Put,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ConversationRuntime,
  type TestCaseJson,
  type TrackerState,
  writeTestCases,
} from 'src/core';
import { IdempotentIngress } from 'src/modules/idempotency';
import { ModelLoadedGuard } from 'src/modules/model';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { validConversationIdOf } from 'src/platform/http/conversation-id';
import {
  addMessageCommand,
  appendEventsCommand,
  type ConversationParams,
  replaceEventsCommand,
} from './commands';
import { boolParam, floatParam, testCaseFormatParam, verbosityParam } from './query-params';

/** Rasa's tracker routes. Auth runs first (global guard). */
@Controller('conversations')
@UseGuards(ModelLoadedGuard)
export class TrackerController {
  private readonly maxTextLength: number;

  constructor(
    private readonly runtime: ConversationRuntime,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly ingress: IdempotentIngress,
  ) {
    this.maxTextLength = config.http.maxTextLength;
  }

  @Get('*conversationId/tracker')
  getTracker(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('until') until: unknown,
  ): Promise<TrackerState> {
    return this.runtime.tracker({
      conversationId: validConversationIdOf(req),
      verbosity: verbosityParam(includeEvents),
      until: floatParam(until),
    });
  }

  @Delete('*conversationId/tracker')
  @HttpCode(204)
  async deleteTracker(@Req() req: Request): Promise<void> {
    await this.runtime.deleteConversation(validConversationIdOf(req));
  }

  @Post('*conversationId/tracker/events')
  @HttpCode(200)
  appendEvents(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
    @Query('execute_side_effects') executeSideEffects: unknown,
    @Query('output_channel') outputChannel: unknown,
  ): Promise<TrackerState> {
    const body: unknown = req.body;
    const command = appendEventsCommand(
      params(req, includeEvents, outputChannel),
      body,
      boolParam(executeSideEffects, false),
      this.maxTextLength,
    );
    return this.runtime.appendEvents(command);
  }

  @Put('*conversationId/tracker/events')
  replaceEvents(
    @Req() req: Request,
    @Query('include_events') includeEvents: unknown,
  ): Promise<TrackerState> {
    const body: unknown = req.body;
    return this.runtime.replaceEvents(
      replaceEventsCommand(params(req, includeEvents, undefined), body, this.maxTextLength),
    );
  }

  @Get('*conversationId/story')
  async getStory(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Query('until') until: unknown,
    @Query('all_sessions') allSessions: unknown,
  ): Promise<string> {
    const story = await this.runtime.story({
      conversationId: validConversationIdOf(req),
      until: floatParam(until),
      allSessions: boolParam(allSessions, false),
    });
    res.type('text/plain; charset=utf-8');
    return story;
  }

  /**
   * Parley's export of the conversation as a Rasa Pro end-to-end test case (the inspector's
   * E2E tab, with slots): YAML for `parley test e2e`, or `?format=json` for the same data.
   */
  @Get('*conversationId/test_case')
  async getTestCase(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Query('until') until: unknown,
    @Query('format') format: unknown,
  ): Promise<string | { test_cases: TestCaseJson[] }> {
    const as = testCaseFormatParam(format);
    const testCase = await this.runtime.testCase({
      conversationId: validConversationIdOf(req),
      until: floatParam(until),
    });
    if (as === 'json') return { test_cases: [testCase] };
    res.type('text/yaml; charset=utf-8');
    return writeTestCases([testCase]);
  }

  /** Idempotent by `Idempotency-Key` or the body's `message_id` (see IdempotentIngress). */
  @Post('*conversationId/messages')
  @HttpCode(200)
  async addMessage(
    @Req() req: Request,
    @Res() res: Response,
    @Query('include_events') includeEvents: unknown,
  ): Promise<void> {
    const body: unknown = req.body;
    const command = addMessageCommand(
      params(req, includeEvents, undefined),
      body,
      this.maxTextLength,
    );
    const scope = { scope: 'conversations', sender: command.conversationId };
    await this.ingress.run(req, res, scope, command.messageId ?? null, async () => {
      const state = await this.runtime.addMessage(command);
      res.status(200).json(state);
    });
  }
}

/** The conversation id of the path (checked against the id rules) and the shared parameters. */
function params(req: Request, includeEvents: unknown, outputChannel: unknown): ConversationParams {
  return { conversationId: validConversationIdOf(req), includeEvents, outputChannel };
}
