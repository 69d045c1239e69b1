import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { ApiError } from 'src/platform/errors/api-error';

const YAML_TYPES = /^(application|text)\/(x-)?(yaml|yml)\b/i;
const JSON_TYPES = /^application\/([\w.+-]*\+)?json\b/i;
const DIGITS = /^\d{1,15}$/;

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/** Bytes of a size limit as body-parser reads it (`'1mb'`, `'512kb'`, `1024`). */
function limitBytes(limit: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(limit);
  if (!m) return null;
  const unit = (m[2] ?? 'b').toLowerCase();
  const power = ['b', 'kb', 'mb', 'gb', 'tb', 'pb'].indexOf(unit);
  return Math.floor(Number(m[1]) * 1024 ** power);
}

/**
 * Reads a body of a declared length that is within the limit, uncompressed and not chunked —
 * what nearly every API call sends — with plain stream listeners. Every other request goes
 * through express.raw (decompression, chunked bodies, the 413 on an oversized declaration).
 * Node's HTTP parser hands over exactly `length` bytes unless the client goes away, which is
 * reported as express.raw reports it ("request aborted", 400).
 */
function readDeclaredBody(req: Request, length: number, done: (e: unknown, b?: Buffer) => void) {
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
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    if (received !== length) {
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

/**
 * Body parsing for every route: the raw bytes are read once (size-capped). YAML bodies become
 * strings; everything else is parsed as JSON whatever the Content-Type, as Rasa's server does,
 * so `curl -d '{…}'` works without a header. A body declared as JSON that does not parse is a
 * 400; an undeclared one that does not parse is handed over as text. An empty body stays
 * `undefined`, so routes can tell "no body" from `{}`.
 */
export function bodyParsers(limit: string): Middleware[] {
  const raw = express.raw({ type: () => true, limit });
  const maxBytes = limitBytes(limit);
  const parse = (req: Request, next: NextFunction): void => {
    const buf: unknown = req.body;
    if (!Buffer.isBuffer(buf) || buf.length === 0) {
      req.body = undefined;
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
    if (
      headers['transfer-encoding'] === undefined &&
      (headers['content-encoding'] === undefined || headers['content-encoding'] === 'identity')
    ) {
      if (declared === undefined) {
        // No body at all (as express.raw decides: neither a length nor chunked).
        req.body = undefined;
        next();
        return;
      }
      if (maxBytes !== null && DIGITS.test(declared) && Number(declared) <= maxBytes) {
        readDeclaredBody(req, Number(declared), (error, buf) => {
          if (error) {
            next(error);
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
