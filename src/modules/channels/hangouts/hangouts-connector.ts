import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { isJsonObject } from 'src/core/events/json-values';
import {
  badBody,
  type Connector,
  type ConnectorRoute,
  once,
  parseJsonBody,
  rawBody,
} from 'src/modules/channels/connector/connector';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { type IdempotentIngress } from 'src/modules/idempotency';
import { HangoutsAuth } from './hangouts-auth';
import { type HangoutsSettings } from './hangouts-config';
import { HangoutsOutputChannel } from './hangouts.output-channel';

const obj = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/** What one Google Chat event asks of the bot: a user message, or nothing. */
export interface HangoutsTurn {
  readonly text: string;
  readonly sender: unknown;
  /** The room's display name when the event is in a room (Rasa's metadata), else null. */
  readonly room: unknown;
}

/**
 * Rasa's HangoutsInput at `/webhooks/hangouts/webhook` (POST), answering synchronously:
 *
 * - With `project_id`, the `Authorization: Bearer <JWT>` must be a token of Google Chat for
 *   that project (HangoutsAuth), else a 401 failure body before the body is read. Without it
 *   events are not authenticated, as in Rasa (a warning at start).
 * - Events: `MESSAGE` → the message's `text`, sender `message.sender.displayName`;
 *   `CARD_CLICKED` → the clicked button's `action.actionMethodName`; `ADDED_TO_SPACE` →
 *   `hangouts_room_added_intent_name` in a room, `hangouts_user_added_intent_name` in a direct
 *   message; `REMOVED_FROM_SPACE` → `hangouts_removed_intent_name` (Rasa's constructor
 *   overwrites the user-added name with it, so Rasa sends `/bot_removed` for both; Parley keeps
 *   them apart). Except for MESSAGE the sender is `user.displayName`. Other events, or an
 *   intent name set empty, answer `{}` without a turn.
 * - Metadata `{room}`: the space's `displayName` when its `type` is `ROOM`, else null.
 * - The answer is the Google Chat message the turn's bot messages make (HangoutsOutputChannel),
 *   `{}` when the bot says nothing. A failed turn is a failure body (Rasa answers what it
 *   collected). A redelivered MESSAGE (same `message.name`) replays the first answer.
 *
 * Rasa's HangoutsInput has no output channel for `output_channel=hangouts`: answers exist
 * only as the HTTP answer to an event.
 */
export class HangoutsConnector implements Connector {
  private static readonly log = new Logger('Connector[hangouts]');
  readonly name = 'hangouts';
  private readonly auth: HangoutsAuth | null;

  constructor(
    private readonly settings: HangoutsSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.auth =
      settings.projectId === null
        ? null
        : new HangoutsAuth(settings.projectId, settings.certsUrl, settings.http.timeoutMs);
  }

  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    await this.auth?.verify(req.headers.authorization);
    const event = parseJsonBody(this.name, rawBody(req));
    const turn = readEvent(event, this.settings);
    if (turn === null) {
      res.status(200).json({});
      return true;
    }
    if (typeof turn.sender !== 'string' || turn.sender === '') {
      throw badBody(this.name, 'The event names no sender (its displayName).');
    }
    const sender = turn.sender;
    const room = typeof turn.room === 'string' ? turn.room : null;
    const messageName = event.type === 'MESSAGE' ? obj(event.message).name : null;
    const output = new HangoutsOutputChannel();
    await once(
      this.ingress,
      req,
      res,
      { scope: this.name, sender },
      typeof messageName === 'string' ? messageName : null,
      async () => {
        await this.input.handleMessage({
          text: turn.text,
          senderId: sender,
          inputChannel: this.name,
          output,
          metadata: { room },
        });
        res.status(200).json(output.message);
      },
    );
    return true;
  }
}

/** The user message of a Google Chat event as Rasa reads it; null for none. */
export function readEvent(
  event: Record<string, unknown>,
  settings: Pick<HangoutsSettings, 'userAddedIntent' | 'roomAddedIntent' | 'removedIntent'>,
): HangoutsTurn | null {
  const space = obj(event.space);
  const room = space.type === 'ROOM' ? (space.displayName ?? null) : null;
  const user = obj(event.user).displayName;
  let text: unknown;
  let sender: unknown = user;
  switch (event.type) {
    case 'MESSAGE':
      text = obj(event.message).text;
      sender = obj(obj(event.message).sender).displayName;
      break;
    case 'CARD_CLICKED':
      text = obj(event.action).actionMethodName;
      break;
    case 'ADDED_TO_SPACE':
      text = room !== null ? settings.roomAddedIntent : settings.userAddedIntent;
      break;
    case 'REMOVED_FROM_SPACE':
      text = settings.removedIntent;
      break;
    default:
      return null;
  }
  if (typeof text !== 'string' || text === '') return null;
  return { text, sender, room };
}
