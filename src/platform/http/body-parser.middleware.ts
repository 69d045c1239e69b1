import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { ApiError } from 'src/platform/errors/api-error';

const YAML_TYPES = /^(application|text)\/(x-)?(yaml|yml)\b/i;
const JSON_TYPES = /^application\/([\w.+-]*\+)?json\b/i;
const DIGITS = /^\d{1,15}$/;

/**
 * Deepest nesting of arrays and objects a JSON body may have. Rasa's events nest 5 deep, a
 * channel's metadata rarely more than a few levels; thousands of levels only overflow the
 * stack of whatever walks the value later (JSON.stringify, validation, the database driver).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The routes that take one user message: channel webhooks, `POST /model/parse` and
 * `POST /conversations/<id>/messages` (`trigger_intent`, `execute`). They read bodies up to the
 * message body limit only.
 */
const MESSAGE_ROUTE =
  /^\/webhooks\/|^\/model\/parse\/?$|^\/conversations\/.+\/(messages|trigger_intent|execute)\/?$/;

/**
 * The webhooks of the messaging connectors (channels module, `connectors.ts`; Rasa's channel
 * names, which no custom channel may take): their bodies are signed by the platform, so they
 * are handed over as the raw bytes, unparsed; the connector checks the signature over exactly
 * these bytes before it parses anything. Routes below `webhook` (`webhook/<id>/activities`)
 * too.
 */
export const RAW_BODY_ROUTE =
  /^\/webhooks\/(slack|telegram|facebook|twilio|twilio_voice|botframework|mattermost|rocketchat|webexteams|hangouts|audiocodes|jambonz)\/webhook(\/[^?]*)?$/;

/** The routes that take training data or test data: `POST /model/train`, `/model/test/*`. */
const UPLOAD_ROUTE = /^\/model\/(train|test\/[^/]+)\/?$/;

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether an already parsed value nests arrays/objects deeper than `max` (no recursion). */
export function valueDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Whether JSON text nests arrays/objects deeper than `max`: one pass over the bytes (strings
 * skipped), before JSON.parse builds anything. Bytes of multi-byte UTF-8 characters are never
 * ASCII, so no character can be mistaken for a bracket or a quote.
 */
export function jsonDeeperThan(buf: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return false;
}

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/** Bytes of a size limit as body-parser reads it (`'1mb'`, `'512kb'`, `1024`). */
function limitBytes(limit: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(limit);
  if (!m) return null;
  const unit = (m[2] ?? 'b').toLowerCase();
  const power = ['b', 'kb', 'mb', 'gb', 'tb', 'pb'].indexOf(unit);
  return Math.floor(Number(m[1]) * 1024 ** power);
}

/** The error a body over the route's limit is answered with (413, as body-parser words it). */
function tooLarge(limit: number, received?: number): Error {
  return Object.assign(new Error('request entity too large'), {
    status: 413,
    type: 'entity.too.large',
    limit,
    ...(received !== undefined ? { received } : {}),
  });
}

/**
 * Reads an uncompressed body — of a declared length within the limit, or chunked — with plain
 * stream listeners, counting bytes as they come: a chunked body that passes `max` is a 413 at
 * once, without reading (or keeping) the rest. Node's HTTP parser hands over exactly `length`
 * bytes unless the client goes away, which is reported as express.raw reports it
 * ("request aborted", 400).
 */
function readBody(
  req: Request,
  length: number | null,
  max: number,
  done: (e: unknown, b?: Buffer) => void,
) {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (error: unknown, body?: Buffer): void => {
    if (finished) return;
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
    req.off('error', onError);
    done(error, body);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > max) {
      chunks.length = 0;
      finish(tooLarge(max, received));
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    if (length !== null && received !== length) {
      finish(
        Object.assign(new Error('request size did not match content length'), {
          status: 400,
          type: 'request.size.invalid',
        }),
      );
      return;
    }
    finish(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
  };
  const onAborted = (): void =>
    finish(Object.assign(new Error('request aborted'), { status: 400, type: 'request.aborted' }));
  const onError = (e: unknown): void => finish(e);
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('aborted', onAborted);
  req.on('error', onError);
}

/** How long a connection whose body was refused stays open for the client to read the 413. */
const LINGER_MS = 5_000;

/**
 * Answers a body over the route's limit with 413 at once, before the rest arrives, and stops
 * reading the request: the kernel's buffers fill, the client's writes stall, and a client that
 * reads while it sends (or stops on the answer) sees the 413 and closes. After
 * {@link LINGER_MS} the connection is cut. The rest of the body is neither read nor kept, so a
 * 100 MB upload to a 64 KiB route costs the server neither its memory nor its bandwidth.
 */
function refuseTooLarge(req: Request, res: Response, next: NextFunction, error: Error): void {
  // Marks the request as being consumed (so Node does not drain it after the answer) and
  // leaves it paused.
  req.read(0);
  req.pause();
  // The rest of this request is never read, so the connection cannot carry another: say so,
  // or a keep-alive client sends its next request into it and waits out the linger. Node ends
  // a `Connection: close` answer by destroying the socket, which would reset the connection
  // under a client still sending (it may then lose the 413); half-close it instead.
  res.setHeader('Connection', 'close');
  const socket = req.socket;
  socket.destroySoon = function halfClose(this: typeof socket): void {
    if (this.writable) this.end();
  };
  res.once('finish', () => {
    if (req.complete) return;
    const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
    timer.unref();
    req.once('close', () => clearTimeout(timer));
  });
  next(error);
}

/** Body size limits per kind of route, as body-parser reads them (`'64kb'`, `'1mb'`, bytes). */
export interface BodyLimits {
  /** Channel webhooks, `/model/parse`, `/conversations/<id>/messages|trigger_intent|execute`. */
  readonly message: string;
  /** `POST /model/train` and `/model/test/*`: training and test data. */
  readonly upload: string;
  /** Every other route: tracker events, GraphQL, `PUT /model`, … */
  readonly other: string;
}

/**
 * Body parsing for every route: the raw bytes are read once (size-capped). YAML bodies become
 * strings; everything else is parsed as JSON whatever the Content-Type, as Rasa's server does,
 * so `curl -d '{…}'` works without a header. A body declared as JSON that does not parse is a
 * 400; an undeclared one that does not parse is handed over as text. An empty body stays
 * `undefined`, so routes can tell "no body" from `{}`. The connector webhooks
 * ({@link RAW_BODY_ROUTE}) get the raw bytes as a Buffer.
 */
export function bodyParsers(limits: BodyLimits): Middleware[] {
  const reader = (limit: string) => ({
    raw: express.raw({ type: () => true, limit }),
    maxBytes: limitBytes(limit),
  });
  const readers = {
    message: reader(limits.message),
    upload: reader(limits.upload),
    other: reader(limits.other),
  };
  const readerOf = (path: string) =>
    MESSAGE_ROUTE.test(path)
      ? readers.message
      : UPLOAD_ROUTE.test(path)
        ? readers.upload
        : readers.other;
  const parse = (req: Request, next: NextFunction): void => {
    const buf: unknown = req.body;
    if (!Buffer.isBuffer(buf) || buf.length === 0) {
      req.body = undefined;
      next();
      return;
    }
    if (RAW_BODY_ROUTE.test(req.path)) {
      next();
      return;
    }
    const text = buf.toString('utf8');
    const contentType = req.headers['content-type'] ?? '';
    if (YAML_TYPES.test(contentType)) {
      req.body = text;
      next();
      return;
    }
    if (jsonDeeperThan(buf, MAX_JSON_DEPTH)) {
      if (!JSON_TYPES.test(contentType) && !/^\s*[[{]/.test(text)) {
        // Not declared as JSON and not JSON-looking: the route decides (e.g. YAML).
        req.body = text;
        next();
        return;
      }
      next(
        new ApiError(
          'HTTP.MALFORMED_BODY',
          `The request body nests arrays or objects deeper than the limit of ${MAX_JSON_DEPTH} levels.`,
          { rule: 'max_json_depth', max_depth: MAX_JSON_DEPTH },
        ),
      );
      return;
    }
    try {
      req.body = JSON.parse(text) as unknown;
      next();
    } catch (e) {
      if (!JSON_TYPES.test(contentType)) {
        // Not declared as JSON and not JSON: hand the text to the route, which decides.
        req.body = text;
        next();
        return;
      }
      next(
        new ApiError(
          'HTTP.MALFORMED_BODY',
          `The request body is not valid JSON: ${(e as Error).message}`,
        ),
      );
    }
  };
  const body: Middleware = (req, res, next) => {
    const { headers } = req;
    const declared = headers['content-length'];
    const chunked = headers['transfer-encoding'] !== undefined;
    if (declared === undefined && !chunked) {
      // No body at all (as express.raw decides: neither a length nor chunked): `req.body` stays
      // unset (undefined), and nothing else is looked at.
      next();
      return;
    }
    const { raw, maxBytes } = readerOf(req.path);
    if (
      maxBytes !== null &&
      (headers['content-encoding'] === undefined || headers['content-encoding'] === 'identity')
    ) {
      const length = declared !== undefined && DIGITS.test(declared) ? Number(declared) : null;
      if (length !== null && length > maxBytes) {
        refuseTooLarge(req, res, next, tooLarge(maxBytes, length));
        return;
      }
      if (length !== null || (chunked && declared === undefined)) {
        readBody(req, chunked ? null : length, maxBytes, (error, buf) => {
          if (error) {
            if ((error as { status?: number }).status === 413) {
              refuseTooLarge(req, res, next, error as Error);
            } else next(error);
            return;
          }
          req.body = buf;
          parse(req, next);
        });
        return;
      }
    }
    raw(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      parse(req, next);
    });
  };
  return [body];
}
