/** Wire types of the Genesys AudioHook protocol (version "2"), Audio Connector flavour. */
import { type JsonObject } from 'src/core/events/event-base';

export const AUDIOHOOK_VERSION = '2';
export const NULL_UUID = '00000000-0000-0000-0000-000000000000';
/** Text messages longer than this are refused ("Text message too large (>64K)"). */
export const MAX_TEXT_MESSAGE_LENGTH = 65_535;

const UUID_RE =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|0{8}-0{4}-0{4}-0{4}-0{12})$/i;
const DURATION_RE = /^PT(?:\d*\.)?\d+S$/;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

export function isDuration(value: unknown): value is string {
  return typeof value === 'string' && DURATION_RE.test(value);
}

/** `PT1.5S` → 1500 (ms); null when not a duration. */
export function durationToMs(value: unknown): number | null {
  if (!isDuration(value)) return null;
  return Math.round(Number.parseFloat(value.slice(2, -1)) * 1000);
}

export type ChannelName = 'external' | 'internal';

export interface MediaFormat {
  readonly type: 'audio';
  readonly format: 'PCMU' | 'L16';
  readonly channels: readonly ChannelName[];
  readonly rate: number;
}

export interface Participant {
  readonly id: string;
  readonly ani: string;
  readonly aniName: string;
  readonly dnis: string;
}

export interface OpenParameters {
  readonly organizationId: string;
  readonly conversationId: string;
  readonly participant: Participant;
  readonly media: readonly unknown[];
  readonly language?: string;
  readonly inputVariables?: Readonly<Record<string, string>>;
  readonly customConfig?: JsonObject;
}

/**
 * What a client may send. `pause` and `resume` are server → client only (the client answers them
 * with `paused` / `resumed`); a client sending them breaks the protocol.
 */
export const CLIENT_MESSAGE_TYPES = [
  'open',
  'close',
  'ping',
  'update',
  'paused',
  'resumed',
  'discarded',
  'error',
  'dtmf',
  'playback_started',
  'playback_completed',
] as const;
export type ClientMessageType = (typeof CLIENT_MESSAGE_TYPES)[number];

export type DisconnectReason = 'completed' | 'unauthorized' | 'error';

/** The first PCMU 8 kHz offer carrying the external (caller) channel, or null. */
export function selectMedia(offers: readonly unknown[]): MediaFormat | null {
  for (const candidate of offers) {
    if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) continue;
    const offer = candidate as Record<string, unknown>;
    const channels = offer.channels;
    if (
      offer.type === 'audio' &&
      offer.format === 'PCMU' &&
      offer.rate === 8000 &&
      Array.isArray(channels) &&
      channels.length >= 1 &&
      channels.length <= 2 &&
      channels.every((c: unknown) => c === 'external' || c === 'internal') &&
      channels.includes('external')
    ) {
      return { type: 'audio', format: 'PCMU', channels: channels, rate: 8000 };
    }
  }
  return null;
}

/** The external channel's bytes of a PCMU frame (stereo frames are interleaved per sample). */
export function externalChannel(frame: Uint8Array, media: MediaFormat): Uint8Array {
  if (media.channels.length === 1) return frame;
  const index = media.channels.indexOf('external');
  const out = new Uint8Array(frame.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = frame[2 * i + index] ?? 0xff;
  return out;
}
