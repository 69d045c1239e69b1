import { Controller, HttpCode, Logger, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import {
  AssistantSource,
  ConversationRuntime,
  DEFAULT_SENDER_ID,
  DialogueError,
  DialogueStateTracker,
  deserializeEvent,
  evaluateStories,
  readStoriesYaml,
  storyTextParser,
  trainingTrackers,
  validateEventsPayload,
  type JsonObject,
  type StoryEvaluation,
} from 'src/core';
import { boolParam, verbosityParam } from './query-params';

const NO_STORIES =
  'You must provide some stories in the request body in order to evaluate your model.';

/** `POST /model/predict` and `POST /model/test/stories`. */
@Controller('model')
export class ModelDialogueController {
  private readonly logger = new Logger(ModelDialogueController.name);

  constructor(
    private readonly assistants: AssistantSource,
    private readonly runtime: ConversationRuntime,
  ) {}

  /** Predicts on a temporary tracker built from the posted events; nothing is stored or run. */
  @Post('predict')
  @HttpCode(200)
  predict(@Req() req: Request, @Query('include_events') includeEvents: unknown): JsonObject | null {
    const assistant = this.assistants.require();
    const body: unknown = req.body;
    if (!Array.isArray(body)) {
      throw new DialogueError(
        'EVENTS.INVALID',
        'Failed to validate the events format. For more information about the format visit the docs. Error: the body must be a list of events.',
      );
    }
    const checked = validateEventsPayload(body);
    if (!checked.ok) throw new DialogueError('EVENTS.INVALID', checked.message);
    const verbosity = verbosityParam(includeEvents);
    let tracker: DialogueStateTracker;
    try {
      const now = Date.now() / 1000;
      const events = checked.events.map((r) => deserializeEvent(r, () => now));
      tracker = DialogueStateTracker.fromEvents(DEFAULT_SENDER_ID, events, assistant.domain);
    } catch (e) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `Supplied events are not valid. ${(e as Error).message}`,
        { parameter: '', in: 'body' },
      );
    }
    return this.runtime.predictOn(tracker, assistant, verbosity);
  }

  /** Evaluates YAML test stories against the loaded model (`e2e=true`: parse the user texts). */
  @Post('test/stories')
  @HttpCode(200)
  async testStories(@Req() req: Request, @Query('e2e') e2e: unknown): Promise<StoryEvaluation> {
    const assistant = this.assistants.require();
    const body: unknown = req.body;
    if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) {
      throw new DialogueError('REQUEST.BODY_MISSING', NO_STORIES);
    }
    if (typeof body !== 'string') {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        'The request body must be test stories in YAML (Content-Type: application/x-yaml).',
        { parameter: 'body', in: 'body' },
      );
    }
    if (!assistant.policies) {
      throw new DialogueError(
        'MODEL.NOT_LOADED',
        'The loaded model has no dialogue policies to evaluate. Load a model trained with stories or rules.',
      );
    }
    const { blocks } = readStoriesYaml(body, 'request body');
    const stories = trainingTrackers(
      blocks.filter((b) => !b.isRule),
      assistant.domain,
    );
    if (stories.length === 0) throw new DialogueError('REQUEST.BODY_MISSING', NO_STORIES);
    const processor = this.runtime.processor(assistant, () => Date.now() / 1000);
    // End to end, each user text is parsed ahead with every component (a Duckling server too).
    const parsed = boolParam(e2e, false)
      ? await storyTextParser(assistant.nlu, stories, {
          onWarning: (m: string) => this.logger.warn(m),
        })
      : null;
    const parse =
      parsed === null ? null : (text: string): JsonObject => parsed(text) as unknown as JsonObject;
    try {
      return evaluateStories(processor, stories, parse).evaluation;
    } catch (e) {
      if (e instanceof DialogueError) throw e;
      throw new DialogueError(
        'DIALOGUE.TESTING_ERROR',
        `An unexpected error occurred during evaluation. Error: ${(e as Error).message}`,
      );
    }
  }
}
