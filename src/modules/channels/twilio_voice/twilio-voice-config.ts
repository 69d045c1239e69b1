import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { webhookUrlSetting } from 'src/modules/channels/twilio/twilio-config';
import { TwilioVoiceConnector } from './twilio-voice-connector';

export const TWILIO_VOICE_KEY = 'twilio_voice';

/** The settings of the `twilio_voice` entry (Rasa's TwilioVoiceInput.from_credentials, plus two). */
export interface TwilioVoiceSettings {
  /** The user message sent for the caller when a call comes in. */
  readonly initialPrompt: string;
  /** Spoken when the caller said nothing and the bot has said nothing yet. */
  readonly repromptFallbackPhrase: string;
  /** The `voice` of every `<Say>`. */
  readonly assistantVoice: string;
  /** `<Gather speechTimeout>`: whole seconds, or `auto`. */
  readonly speechTimeout: string;
  /** `<Gather speechModel>`. */
  readonly speechModel: string;
  /** `<Gather enhanced>`: `true` or `false`. */
  readonly enhanced: string;
  /** Parley's: every webhook request must carry Twilio's signature made with it. */
  /**
   * The account's auth token, which signs every webhook request (X-Twilio-Signature); null
   * for an entry copied from Rasa, whose voice channel has no such key: requests are then
   * not authenticated, as in Rasa, and the start warns.
   */
  readonly authToken: string | null;
  /** Parley's: the public URL Twilio calls (signed, and the `<Gather action>`); null: rebuilt. */
  readonly webhookUrl: string | null;
}

export const TWILIO_VOICE_KEYS = [
  'initial_prompt',
  'reprompt_fallback_phrase',
  'assistant_voice',
  'speech_timeout',
  'speech_model',
  'enhanced',
  'auth_token',
  'webhook_url',
] as const;

/** The voices Rasa's TwilioVoiceInput accepts (`SUPPORTED_VOICES`). */
export const TWILIO_VOICES: readonly string[] = [
  'man',
  'woman',
  'alice',
  ...[
    'Mads',
    'Naja',
    'Lotte',
    'Reuben',
    'Nicole',
    'Russell',
    'Amy',
    'Brian',
    'Emma',
    'Amy-Neural',
    'Emma-Neural',
    'Brian-Neural',
    'Raveena',
    'Ivy',
    'Joanna',
    'Joey',
    'Justin',
    'Kendra',
    'Kimberly',
    'Matthew',
    'Salli',
    'Ivy-Neural',
    'Joanna-Neural',
    'Kendra-Neural',
    'Kimberly-Neural',
    'Sally-Neural',
    'Joey-Neural',
    'Justin-Neural',
    'Matthew-Neural',
    'Geraint',
    'Celine',
    'Mathieu',
    'Chantal',
    'Hans',
    'Marlene',
    'Vicki',
    'Dora',
    'Karl',
    'Carla',
    'Giorgio',
    'Mizuki',
    'Takumi',
    'Liv',
    'Jacek',
    'Jan',
    'Ewa',
    'Maja',
    'Ricardo',
    'Vitoria',
    'Camila-Neural',
    'Cristiano',
    'Ines',
    'Carmen',
    'Maxim',
    'Tatyana',
    'Conchita',
    'Enrique',
    'Miguel',
    'Penelope',
    'Lupe-Neural',
    'Astrid',
    'Filiz',
    'Gwyneth',
  ].map((name) => `Polly.${name}`),
];

/** The speech models Rasa accepts (`SUPPORTED_SPEECH_MODELS`). */
export const TWILIO_SPEECH_MODELS: readonly string[] = [
  'default',
  'numbers_and_commands',
  'phone_call',
];

/** A setting Rasa reads as text that YAML may give as a number or boolean (`5`, `false`). */
function textSetting(
  file: string,
  settings: ChannelCredentials,
  key: string,
  fallback: string,
): string {
  const value = settings?.[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') {
    throw invalid(file, `${TWILIO_VOICE_KEY}.${key}`, 'must be a string');
  }
  return value;
}

/**
 * Checks the entry with Rasa's rules (TwilioVoiceInput._validate_configuration, same order):
 * a supported voice; `speech_timeout` a whole number or `auto`; a supported speech model;
 * `enhanced` true or false, true only with `phone_call`; `auto` only with
 * `numbers_and_commands`. Rasa's defaults: `hello`, `I'm sorry I didn't get that could you
 * rephrase.`, `woman`, `5`, `default`, `false`.
 */
export function twilioVoiceSettings(
  file: string,
  settings: ChannelCredentials,
): TwilioVoiceSettings {
  const key = (name: string) => `${TWILIO_VOICE_KEY}.${name}`;
  const initialPrompt =
    stringSetting(file, TWILIO_VOICE_KEY, settings, 'initial_prompt') ?? 'hello';
  const repromptFallbackPhrase =
    stringSetting(file, TWILIO_VOICE_KEY, settings, 'reprompt_fallback_phrase') ??
    "I'm sorry I didn't get that could you rephrase.";
  const assistantVoice = textSetting(file, settings, 'assistant_voice', 'woman');
  const speechTimeout = textSetting(file, settings, 'speech_timeout', '5');
  const speechModel = textSetting(file, settings, 'speech_model', 'default');
  const enhanced = textSetting(file, settings, 'enhanced', 'false');
  if (!TWILIO_VOICES.includes(assistantVoice)) {
    throw invalid(
      file,
      key('assistant_voice'),
      `must be one of the voices Rasa supports (man, woman, alice, Polly.Joanna …), got "${assistantVoice}"`,
    );
  }
  if (!/^\d+$/.test(speechTimeout.trim()) && speechTimeout.toLowerCase() !== 'auto') {
    throw invalid(
      file,
      key('speech_timeout'),
      `must be a whole number of seconds or auto, got "${speechTimeout}"`,
    );
  }
  if (!TWILIO_SPEECH_MODELS.includes(speechModel)) {
    throw invalid(
      file,
      key('speech_model'),
      `must be default, numbers_and_commands or phone_call, got "${speechModel}"`,
    );
  }
  if (!['true', 'false'].includes(enhanced.toLowerCase())) {
    throw invalid(file, key('enhanced'), `must be true or false, got "${enhanced}"`);
  }
  if (enhanced.toLowerCase() === 'true' && speechModel !== 'phone_call') {
    throw invalid(
      file,
      key('enhanced'),
      `can be true only with speech_model phone_call (speech_model is ${speechModel})`,
    );
  }
  if (speechTimeout.toLowerCase() === 'auto' && speechModel !== 'numbers_and_commands') {
    throw invalid(
      file,
      key('speech_timeout'),
      `can be auto only with speech_model numbers_and_commands (speech_model is ${speechModel})`,
    );
  }
  return {
    initialPrompt,
    repromptFallbackPhrase,
    assistantVoice,
    speechTimeout: speechTimeout.trim(),
    speechModel,
    enhanced: enhanced.toLowerCase(),
    authToken: nonEmpty(stringSetting(file, TWILIO_VOICE_KEY, settings, 'auth_token')),
    webhookUrl: webhookUrlSetting(file, TWILIO_VOICE_KEY, settings),
  };
}

const nonEmpty = (value: string | null): string | null =>
  value === null || value === '' ? null : value;

/** The `twilio_voice` connector (see `connectors.ts`). */
export const TWILIO_VOICE_CONNECTOR = connectorDefinition({
  key: TWILIO_VOICE_KEY,
  keys: TWILIO_VOICE_KEYS,
  warnings: (settings: TwilioVoiceSettings) =>
    settings.authToken === null
      ? [
          "no auth_token: calls are accepted without checking X-Twilio-Signature, as in Rasa; set auth_token (the Twilio account's) so only Twilio can reach the bot",
        ]
      : [],
  routes: ['webhook'],
  settings: twilioVoiceSettings,
  create: (settings, input, _ingress, conversations) =>
    new TwilioVoiceConnector(settings, input, conversations),
});
