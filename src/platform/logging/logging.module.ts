import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AppConfig } from 'src/platform/config/app-config';

/**
 * Structured JSON logs (pino). Every request gets an id (from `x-request-id` or a new one),
 * echoed back in the response and carried by every log line of the request. Tokens in the
 * query string and Authorization headers are never logged.
 */
@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            genReqId: (req: IncomingMessage, res: ServerResponse) => {
              const given = req.headers['x-request-id'];
              const id =
                typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
              res.setHeader('x-request-id', id);
              return id;
            },
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
            serializers: {
              req: (req: { id: unknown; method: string; url: string }) => ({
                id: req.id,
                method: req.method,
                url: req.url.replace(/([?&]token=)[^&]*/g, '$1***'),
              }),
            },
            autoLogging: {
              ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health'),
            },
          },
        }),
      ],
    };
  }
}
