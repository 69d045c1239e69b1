import type { Request, Response } from 'express';
import { type ConversationReader, EventVerbosity } from 'src/core';
import { isJsonObject } from 'src/core/events/json-values';
import {
  badBody,
  type Connector,
  type ConnectorRoute,
  rawBody,
} from 'src/modules/channels/connector/connector';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { formField, formParams, verifiedForm } from 'src/modules/channels/twilio/twilio-signature';
import { type TwilioVoiceSettings } from './twilio-voice-config';
import { TwilioVoiceOutputChannel } from './twilio-voice.output-channel';
import { type GatherOptions, voiceResponse } from './twiml';

/**
 * Rasa's TwilioVoiceInput at `POST /webhooks/twilio_voice/webhook`, Twilio's voice webhook and
 * the `<Gather>` action, answered with TwiML (`text/xml`, see `voiceResponse`):
 *
 * - `X-Twilio-Signature` must be Twilio's signature with `auth_token`, else a 401 failure body
 *   (Parley's: Rasa's voice channel checks nothing).
 * - The sender is `From`. An incoming call (`CallStatus=ringing`, no `SpeechResult`) sends
 *   `initial_prompt` as the caller's message; a `SpeechResult` is the caller's message; the
 *   bot's answers are spoken, the last inside a speech `<Gather>` that posts back here.
 * - No speech (Twilio posts the `<Gather>` action with an empty or no `SpeechResult`): the last
 *   bot message of the conversation is said again, or `reprompt_fallback_phrase` when there is
 *   none; no turn is run. (Rasa runs an empty `SpeechResult` as a message.)
 * - `action_hangup` (`{custom: {hangup: true}}`) ends the answer with `<Hangup/>`.
 * - No metadata, as Rasa's sends none; no output channel for `output_channel=twilio_voice`.
 */
export class TwilioVoiceConnector implements Connector {
  readonly name = 'twilio_voice';
  private readonly gather: GatherOptions;

  constructor(
    private readonly settings: TwilioVoiceSettings,
    private readonly input: ChannelInput,
    private readonly conversations: ConversationReader | null = null,
  ) {
    this.gather = {
      // Rasa's is the path, which Twilio resolves against the URL it called; behind a proxy
      // that changes the path, the configured public URL is the one to post back to.
      action: settings.webhookUrl ?? `/webhooks/${this.name}/webhook`,
      speechTimeout: settings.speechTimeout,
      speechModel: settings.speechModel,
      enhanced: settings.enhanced,
      voice: settings.assistantVoice,
    };
  }

  /** Rasa's TwilioVoiceInput has no output channel for `output_channel=twilio_voice`. */
  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const form =
      this.settings.authToken === null
        ? formParams(rawBody(req))
        : verifiedForm(this.name, this.settings.authToken, this.settings.webhookUrl, req);
    const sender = formField(form, 'From');
    if (sender === null || sender === '') {
      throw badBody(this.name, 'The form field "From" (the caller) is missing.');
    }
    const speech = formField(form, 'SpeechResult');
    let text = speech !== null && speech.trim() !== '' ? speech : null;
    if (speech === null && formField(form, 'CallStatus') === 'ringing') {
      text = this.settings.initialPrompt;
    }
    let twiml: string;
    if (text !== null) {
      const output = new TwilioVoiceOutputChannel();
      await this.input.handleMessage({
        text,
        senderId: sender,
        inputChannel: this.name,
        output,
        metadata: null,
      });
      twiml = voiceResponse(output.messages, this.gather);
    } else {
      const last = await this.lastBotText(sender);
      twiml = voiceResponse([{ text: last ?? this.settings.repromptFallbackPhrase }], this.gather);
    }
    res.status(200).type('text/xml').send(twiml);
    return true;
  }

  /** The text of the conversation's last bot message, or null. */
  private async lastBotText(sender: string): Promise<string | null> {
    if (this.conversations === null) return null;
    const tracker = await this.conversations.trackerState(sender, EventVerbosity.AFTER_RESTART);
    const events: readonly unknown[] = Array.isArray(tracker.events) ? tracker.events : [];
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i];
      if (isJsonObject(e) && e.event === 'bot' && typeof e.text === 'string' && e.text !== '') {
        return e.text;
      }
    }
    return null;
  }
}
