/** Attribute values a span carries (OpenTelemetry's primitive attribute values). */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** One span of a trace, as the core sees it. */
export interface TraceSpan {
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed with the error's message. */
  recordError(error: unknown): void;
  end(): void;
}

/**
 * Port: tracing of the core's work (one trace per turn: the turn, the lock wait, the prediction,
 * each action). The core never imports OpenTelemetry; `NoTracing` is the default and the
 * observability module supplies an OpenTelemetry adapter when endpoints.yml has `tracing:`.
 */
export abstract class Tracer {
  /**
   * Runs `work` inside a new span, child of the current one and current for everything `work`
   * starts; the span ends when `work` returns or its promise settles (failed when it throws).
   * `links`: W3C `traceparent`s of the spans whose work this one continues later (a batch of
   * turns relayed together), recorded as span links.
   */
  abstract inSpan<T>(
    name: string,
    attributes: SpanAttributes,
    work: (span: TraceSpan) => T,
    links?: readonly string[],
  ): T;
  /** A child span of the current one that the caller ends (it does not become current). */
  abstract startSpan(name: string, attributes: SpanAttributes): TraceSpan;
  /**
   * The current span as a W3C `traceparent`, for work that continues it later elsewhere (the
   * outbox row a turn writes); `null` when nothing is traced.
   */
  currentTraceparent(): string | null {
    return null;
  }
}

const NO_SPAN: TraceSpan = {
  setAttribute: () => undefined,
  recordError: () => undefined,
  end: () => undefined,
};

/** The tracer of a process without tracing: runs the work, records nothing. */
export class NoTracing extends Tracer {
  inSpan<T>(_name: string, _attributes: SpanAttributes, work: (span: TraceSpan) => T): T {
    return work(NO_SPAN);
  }

  startSpan(): TraceSpan {
    return NO_SPAN;
  }
}
