import { isJsonObject } from 'src/core/events/json-values';

/** XML-escapes text content and attribute values (`&`, `<`, `>`, `"`, `'`). */
export function xmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);
}

const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/** How the caller is listened to after the bot has spoken (`<Gather>`'s attributes). */
export interface GatherOptions {
  /** Where Twilio posts what the caller said (the webhook). */
  readonly action: string;
  readonly speechTimeout: string;
  readonly speechModel: string;
  readonly enhanced: string;
  /** The `voice` of every `<Say>`. */
  readonly voice: string;
}

/**
 * The TwiML answer of one turn (Rasa's `_build_twilio_voice_response`): each bot text is a
 * `<Say>`, the last one inside a speech `<Gather>` (with `actionOnEmptyResult`, so silence
 * also comes back to the webhook) and the others followed by a one-second `<Pause>`. A message
 * `{custom: {hangup: true}}` (action_hangup) ends the answer with `<Hangup/>`; messages without
 * text (images, custom JSON) say nothing. With nothing to say, the answer is a bare `<Gather>`.
 */
export function voiceResponse(
  messages: ReadonlyArray<Record<string, unknown>>,
  gather: GatherOptions,
): string {
  const say = (text: string) => `<Say voice="${xmlEscape(gather.voice)}">${xmlEscape(text)}</Say>`;
  const open =
    `<Gather input="speech" action="${xmlEscape(gather.action)}" actionOnEmptyResult="true"` +
    ` speechTimeout="${xmlEscape(gather.speechTimeout)}" speechModel="${xmlEscape(gather.speechModel)}"` +
    ` enhanced="${xmlEscape(gather.enhanced)}"`;
  const verbs: string[] = [];
  const texts: string[] = [];
  let hangup = false;
  for (const message of messages) {
    if (isJsonObject(message.custom) && message.custom.hangup === true) {
      hangup = true;
      break;
    }
    if (typeof message.text === 'string' && message.text !== '') texts.push(message.text);
  }
  if (hangup) {
    for (const text of texts) verbs.push(say(text), '<Pause length="1"/>');
    verbs.push('<Hangup/>');
  } else if (texts.length === 0) {
    verbs.push(`${open}/>`);
  } else {
    for (const text of texts.slice(0, -1)) verbs.push(say(text), '<Pause length="1"/>');
    verbs.push(`${open}>${say(texts[texts.length - 1]!)}</Gather>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${verbs.join('')}</Response>`;
}
