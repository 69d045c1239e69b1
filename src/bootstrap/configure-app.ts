import { type INestApplication } from '@nestjs/common';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { pinoHttp } from 'pino-http';
import { Tracer } from 'src/core';
import { OtelTracer } from 'src/modules/observability';
import { type AppConfig } from 'src/platform/config/app-config';
import { AllExceptionsFilter } from 'src/platform/errors/all-exceptions.filter';
import { bodyParsers } from 'src/platform/http/body-parser.middleware';
import { answerClientErrors } from 'src/platform/http/client-error.handler';
import { expressErrorHandler } from 'src/platform/http/express-error.handler';
import { traceContextMiddleware } from 'src/platform/http/trace-context';
import { echoRequestId, httpLoggerOptions } from 'src/platform/logging/http-logger.options';
import { requestLevelOf, requestLoggingEnabled } from 'src/platform/logging/request-logging';
import { withQuietStartup } from 'src/platform/logging/startup-noise';
import { httpMetricsMiddleware } from 'src/platform/metrics/http-metrics';

/**
 * Everything main.ts and the e2e tests share: body parsing, the failure-body filter, CORS,
 * logging, HTTP metrics and the request spans when tracing is on. The app must be created
 * with `{ bodyParser: false }`.
 */
export function configureApp(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  express.useLogger(withQuietStartup(express.get(Logger)));
  express.set('x-powered-by', false);
  express.set('etag', false);
  // First: every request is measured, whatever answers it.
  express.use(httpMetricsMiddleware());
  // Every response carries a request id; request log lines only when they are written
  // (pino-http costs ~100 µs of CPU per request even at level silent): at debug by default,
  // at info with LOG_REQUESTS=true. The request logger sets the id itself.
  if (requestLoggingEnabled(config)) {
    express.use(pinoHttp({ ...httpLoggerOptions(config), customLogLevel: requestLevelOf(config) }));
  } else {
    express.use(echoRequestId);
  }
  express.set('trust proxy', config.trustProxy);
  answerClientErrors(express.getHttpServer());
  const filter = new AllExceptionsFilter();
  for (const mw of bodyParsers({
    message: config.http.messageBodyLimit,
    upload: config.http.bodyLimit,
    other: config.http.trackerBodyLimit,
  })) {
    express.use(mw);
  }
  express.use(expressErrorHandler(filter));
  // After the body parsers: their 'end' callbacks would not run in the stored context.
  express.use(traceContextMiddleware);
  // The request's span stays the active context for the handler.
  const tracer = tracerOf(express);
  if (tracer instanceof OtelTracer) express.use(tracer.httpMiddleware());
  express.useGlobalFilters(filter);
  if (config.http.cors.length > 0) {
    express.enableCors({
      origin: config.http.cors.includes('*') ? true : [...config.http.cors],
      credentials: true,
      exposedHeaders: ['filename'],
    });
  }
}

/** The engine's tracer, or null in an application built without the engine. */
function tracerOf(app: INestApplication): Tracer | null {
  try {
    return app.get(Tracer, { strict: false });
  } catch {
    return null;
  }
}
