import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type JsonObject } from 'src/core';
import { isJsonObject } from 'src/core/events/json-values';
import { type Connector, type ConnectorRoute } from 'src/modules/channels/connector/connector';
import { safeEqual } from 'src/modules/channels/connector/signature';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { type JambonzSettings } from './jambonz-config';
import { gatherVerb, JambonzOutputChannel } from './jambonz.output-channel';

/** Where jambonz connects (Rasa's blueprint route `/websocket` below `/webhooks/jambonz`). */
export const JAMBONZ_WS_PATH = '/webhooks/jambonz/websocket';
/** The subprotocol of jambonz's WebSocket API. */
export const JAMBONZ_SUBPROTOCOL = 'ws.jambonz.org';
/** The largest message taken; jambonz's call-control messages are a few KiB (close 1009). */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** Messages waiting for their turn on one socket; a peer that floods it is cut off (1008). */
export const MAX_PENDING_MESSAGES = 64;

/** Close codes of RFC 6455 for a peer that sends what it must not. */
const CLOSE_UNSUPPORTED_DATA = 1003;
const CLOSE_INVALID_PAYLOAD = 1007;
const CLOSE_POLICY_VIOLATION = 1008;

/** What Rasa says when a gather heard nothing. */
const DID_NOT_CATCH = "I'm sorry, I didn't catch that.";

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const obj = (value: unknown): JsonObject => (isJsonObject(value) ? value : {});

/** The caller's words (or keypresses) of a `/gather` hook; null when there are none. */
export function gatherResult(data: JsonObject): { text: string | null; final: boolean } {
  if (data.reason === 'dtmfDetected') {
    const digits = data.digits;
    return {
      text: typeof digits === 'string' || typeof digits === 'number' ? String(digits) : null,
      final: true,
    };
  }
  const speech = obj(data.speech);
  // `alternatives` on the result, or (newer jambonz) on its first transcript.
  const alternatives = Array.isArray(speech.alternatives)
    ? speech.alternatives
    : Array.isArray(speech.transcripts)
      ? obj(speech.transcripts[0]).alternatives
      : undefined;
  const first = Array.isArray(alternatives) ? obj(alternatives[0]) : {};
  return { text: str(first.transcript), final: speech.is_final !== false };
}

/**
 * Rasa Pro's JambonzVoiceReadyInput: jambonz's WebSocket API (subprotocol `ws.jambonz.org`)
 * at `/webhooks/jambonz/websocket` on the HTTP server's port, one socket per call. With
 * `username`/`password` the upgrade must carry that HTTP basic auth (constant time), else a
 * 401 before any socket exists. Each `session:new` and `verb:hook` is answered with one `ack`
 * carrying the verbs to run next (jambonz hangs up when a `session:new` is not acked within
 * 5 seconds):
 *
 * - `session:new`: the turn `/session_start` (sender: `call_sid`; metadata: Rasa's call
 *   parameters, `from` and `to`), then its words as `say` verbs and a `gather` (speech and
 *   digits, `actionHook: /gather`);
 * - `verb:hook` for `/gather`: `speechDetected` → the first transcript is the user's text,
 *   `dtmfDetected` → the digits; then the bot's words and a new `gather`. `timeout` says
 *   "I'm sorry, I didn't catch that." and gathers again. A partial transcript is only acked;
 * - `call:status` `completed`: the turn `/session_end`; other messages are logged.
 *
 * Messages are handled one at a time per socket. A message that is not JSON, not an object or
 * larger than 64 KiB closes the socket cleanly (1007, 1009), binary frames close it with 1003
 * and more than 64 messages waiting with 1008; nothing a peer sends can throw out of the
 * handler.
 */
export class JambonzConnector implements Connector {
  private static readonly log = new Logger('Connector[jambonz]');
  readonly name = 'jambonz';
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    handleProtocols: (protocols) =>
      protocols.has(JAMBONZ_SUBPROTOCOL) ? JAMBONZ_SUBPROTOCOL : false,
  });
  private server: HttpServer | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== JAMBONZ_WS_PATH && path !== `${JAMBONZ_WS_PATH}/`) return; // socket.io, voice …
    socket.on('error', () => undefined);
    if (!this.authorized(request)) {
      const body = JSON.stringify({
        version: '1.0.0',
        status: 'failure',
        reason: 'NotAuthenticated',
        message: 'The jambonz WebSocket needs the configured basic auth.',
        code: 401,
      });
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="jambonz"\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => this.connect(ws));
  };

  constructor(
    private readonly settings: JambonzSettings,
    private readonly input: ChannelInput,
  ) {}

  attach(server: HttpServer): void {
    this.server = server;
    server.on('upgrade', this.onUpgrade);
    JambonzConnector.log.log(`jambonz connector listening on ${JAMBONZ_WS_PATH}`);
  }

  stop(): void {
    this.server?.off('upgrade', this.onUpgrade);
    this.server = null;
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  /** Jambonz has no output channel for `output_channel=jambonz` (Rasa's has none). */
  outputChannel(): null {
    return null;
  }

  /** Only the WebSocket upgrade is served: a plain HTTP request to it is not found. */
  handle(_route: ConnectorRoute, _req: Request, _res: Response): Promise<boolean> {
    return Promise.resolve(false);
  }

  private authorized(request: IncomingMessage): boolean {
    const auth = this.settings.basicAuth;
    if (auth === null) return true;
    const header = request.headers.authorization ?? '';
    const match = /^Basic\s+(\S+)$/i.exec(header);
    const decoded = match === null ? '' : Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = colon < 0 ? '' : decoded.slice(0, colon);
    const password = colon < 0 ? '' : decoded.slice(colon + 1);
    // Both compared, always: the time does not tell which one was wrong.
    const userOk = safeEqual(username, auth.username);
    const passwordOk = safeEqual(password, auth.password);
    return colon >= 0 && userOk && passwordOk;
  }

  private connect(ws: WebSocket): void {
    let queue: Promise<void> = Promise.resolve();
    let pending = 0;
    // Set when the peer broke the protocol: what it sent before is not handled any more.
    let cut = false;
    const refuse = (code: number, reason: string): void => {
      cut = true;
      ws.close(code, reason);
    };
    ws.on('error', (e) =>
      JambonzConnector.log.warn({ err: e.message }, 'jambonz WebSocket error; closed'),
    );
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (cut) return;
      if (isBinary) {
        refuse(CLOSE_UNSUPPORTED_DATA, 'binary messages are not part of the jambonz API');
        return;
      }
      let message: unknown;
      try {
        message = JSON.parse(rawText(data));
      } catch {
        refuse(CLOSE_INVALID_PAYLOAD, 'the message is not valid JSON');
        return;
      }
      if (!isJsonObject(message)) {
        refuse(CLOSE_INVALID_PAYLOAD, 'the message must be a JSON object');
        return;
      }
      if (++pending > MAX_PENDING_MESSAGES) {
        refuse(CLOSE_POLICY_VIOLATION, 'too many messages waiting');
        return;
      }
      queue = queue
        .then(() => (cut ? undefined : this.message(ws, message, refuse)))
        .catch((e: unknown) =>
          JambonzConnector.log.error({ err: (e as Error).message }, 'jambonz message failed'),
        )
        .finally(() => pending--);
    });
  }

  private async message(
    ws: WebSocket,
    message: JsonObject,
    refuse: (code: number, reason: string) => void,
  ): Promise<void> {
    const type = message.type;
    const callSid = str(message.call_sid);
    const msgid = str(message.msgid);
    const data = obj(message.data);
    if (type === 'session:new') {
      if (callSid === null || callSid === '' || msgid === null) {
        refuse(CLOSE_INVALID_PAYLOAD, 'session:new needs call_sid and msgid');
        return;
      }
      const verbs = await this.turn(callSid, '/session_start', {
        call_id: callSid,
        user_phone: data.from ?? null,
        bot_phone: data.to ?? null,
        user_name: null,
        user_host: null,
        bot_host: null,
        direction: null,
        stream_id: null,
      });
      send(ws, { type: 'ack', msgid, data: verbs });
    } else if (type === 'verb:hook') {
      if (msgid === null) return;
      if (message.hook !== '/gather' || callSid === null || callSid === '') {
        send(ws, { type: 'ack', msgid });
        return;
      }
      send(ws, { type: 'ack', msgid, data: await this.gathered(callSid, data) });
    } else if (type === 'call:status') {
      if (data.call_status === 'completed' && callSid !== null && callSid !== '') {
        await this.turn(callSid, '/session_end', {});
      }
    } else if (type === 'jambonz:error') {
      JambonzConnector.log.error(
        { call_sid: callSid },
        'jambonz reported a fatal error of the call',
      );
    } else if (type !== 'session:reconnect' && type !== 'verb:status') {
      JambonzConnector.log.warn({ type: str(type) }, 'unknown jambonz message type; ignored');
    }
  }

  private async gathered(callSid: string, data: JsonObject): Promise<JsonObject[] | undefined> {
    if (data.reason === 'timeout') {
      return [{ verb: 'say', text: DID_NOT_CATCH }, gatherVerb()];
    }
    if (data.reason !== 'speechDetected' && data.reason !== 'dtmfDetected') {
      return [gatherVerb()];
    }
    const result = gatherResult(data);
    // A partial transcript: the final one follows.
    if (!result.final) return undefined;
    if (result.text === null || result.text === '') {
      JambonzConnector.log.warn({ call_sid: callSid }, 'the gather result has no transcript');
      return [gatherVerb()];
    }
    return this.turn(callSid, result.text, {});
  }

  /** One turn; its words and what comes next as verbs. A failed turn ends the call. */
  private async turn(callSid: string, text: string, metadata: JsonObject): Promise<JsonObject[]> {
    const output = new JambonzOutputChannel();
    try {
      await this.input.handleMessage({
        text,
        senderId: callSid,
        inputChannel: this.name,
        output,
        metadata,
      });
    } catch {
      // ChannelInput logged it; the caller hears why the call ends.
      return [
        { verb: 'say', text: 'An error occurred while handling the last message.' },
        { verb: 'hangup' },
      ];
    }
    return output.verbs();
  }
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function send(ws: WebSocket, message: JsonObject): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
}
