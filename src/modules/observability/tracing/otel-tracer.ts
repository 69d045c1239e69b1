import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Link,
  type Tracer as OtelApiTracer,
  type Span,
} from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtelResources from '@opentelemetry/resources';
import type * as OtelSdk from '@opentelemetry/sdk-trace-node';
import type { NodeTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { NextFunction, Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { Tracer, type SpanAttributes, type TraceSpan } from 'src/core';
import { routeTemplateOf } from 'src/platform/metrics/http-metrics';
import { type TracingSettings } from './tracing-settings';

/** The name spans are recorded under (the instrumentation scope). */
const SCOPE = 'parley';

/** A span of the core on an OpenTelemetry span; ending twice is harmless. */
class OtelSpan implements TraceSpan {
  private ended = false;

  constructor(readonly span: Span) {}

  setAttribute(key: string, value: string | number | boolean): void {
    this.span.setAttribute(key, value);
  }

  recordError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    if (error instanceof Error) this.span.recordException(error);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * The core's Tracer on OpenTelemetry: spans nest through the active context (Node's
 * AsyncLocalStorage, registered with the provider), so a turn's lock wait, store calls,
 * prediction and actions are children of the HTTP request's span.
 */
export class OtelTracer extends Tracer {
  private readonly tracer: OtelApiTracer;

  constructor(private readonly provider: NodeTracerProvider) {
    super();
    this.tracer = provider.getTracer(SCOPE);
  }

  inSpan<T>(
    name: string,
    attributes: SpanAttributes,
    work: (span: TraceSpan) => T,
    links?: readonly string[],
  ): T {
    const linked = links === undefined ? [] : links.flatMap(linkOf);
    const options = linked.length > 0 ? { attributes, links: linked } : { attributes };
    return this.tracer.startActiveSpan(name, options, (raw) => {
      const span = new OtelSpan(raw);
      try {
        const result = work(span);
        if (!isThenable(result)) {
          span.end();
          return result;
        }
        return Promise.resolve(result).then(
          (value) => {
            span.end();
            return value;
          },
          (error: unknown) => {
            span.recordError(error);
            span.end();
            throw error;
          },
        ) as T;
      } catch (error) {
        span.recordError(error);
        span.end();
        throw error;
      }
    });
  }

  startSpan(name: string, attributes: SpanAttributes): TraceSpan {
    return new OtelSpan(this.tracer.startSpan(name, { attributes }));
  }

  override currentTraceparent(): string | null {
    const span = trace.getSpan(context.active());
    if (span === undefined) return null;
    const c = span.spanContext();
    if (!isSpanContextValid(c)) return null;
    return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1) === 1 ? '01' : '00'}`;
  }

  /**
   * Express middleware: one server span per request, continuing an incoming W3C `traceparent`,
   * named `<METHOD> <route template>` once routed; everything the request runs is inside it.
   * Install it after the body parsers (their stream events would lose the context).
   */
  httpMiddleware(): (req: Request, res: Response, next: NextFunction) => void {
    return (req, res, next) => {
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = this.tracer.startSpan(
        req.method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
        parent,
      );
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        const route = routeTemplateOf(req);
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
      res.once('finish', end);
      res.once('close', end);
      context.with(trace.setSpan(parent, span), next);
    };
  }

  /** Exports the spans still buffered and stops the exporter. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

/**
 * The tracer of endpoints.yml's `tracing:` — an OTLP/HTTP exporter behind a batch processor —
 * or over the given processors (tests pass an in-memory exporter). Registers the
 * AsyncLocalStorage context manager and the W3C trace-context propagator for the process.
 */
export function createOtelTracer(
  settings: Pick<TracingSettings, 'url' | 'serviceName' | 'rootCertificates'>,
  processors?: SpanProcessor[],
): OtelTracer {
  // The SDK and the exporter load only when tracing is configured: they cost start-up time
  // (a restarted replica is ready sooner) and most deployments leave tracing off.
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, see above */
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof OtelResources;
  const { BatchSpanProcessor, NodeTracerProvider } =
    require('@opentelemetry/sdk-trace-node') as typeof OtelSdk;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const exporter = (): OtlpHttp.OTLPTraceExporter =>
    new OTLPTraceExporter({
      url: settings.url,
      ...(settings.rootCertificates !== null
        ? { httpAgentOptions: { ca: readFileSync(settings.rootCertificates) } }
        : {}),
    });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: processors ?? [new BatchSpanProcessor(exporter())],
  });
  provider.register();
  return new OtelTracer(provider);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span link to a W3C `traceparent` (none for a malformed one). */
function linkOf(traceparent: string): Link[] {
  const m = TRACEPARENT.exec(traceparent);
  if (m === null) return [];
  const [, traceId = '', spanId = '', flags = '00'] = m;
  const spanContext = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
  return isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}
