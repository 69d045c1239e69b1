import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { ApiError } from 'src/platform/errors/api-error';

const YAML_TYPES = /^(application|text)\/(x-)?(yaml|yml)\b/i;
const JSON_TYPES = /^application\/([\w.+-]*\+)?json\b/i;

/**
 * Body parsing for every route: the raw bytes are read once (size-capped). YAML bodies become
 * strings; everything else is parsed as JSON whatever the Content-Type, as Rasa's server does,
 * so `curl -d '{…}'` works without a header. A body declared as JSON that does not parse is a
 * 400; an undeclared one that does not parse is handed over as text. An empty body stays
 * `undefined`, so routes can tell "no body" from `{}`.
 */
export function bodyParsers(
  limit: string,
): Array<(req: Request, res: Response, next: NextFunction) => void> {
  const raw = express.raw({ type: () => true, limit });
  const parse = (req: Request, _res: Response, next: NextFunction): void => {
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
  return [raw, parse];
}
