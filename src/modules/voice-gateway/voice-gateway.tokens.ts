/** DI token of the validated voice connector configuration (VoiceGatewayConfig). */
export const VOICE_CONFIG = Symbol('VOICE_CONFIG');
