import { DialogueError } from 'src/core/errors/dialogue-error';
import { type NluMessage, type TrainingMessage } from 'src/core/nlu/message';
import {
  type NluTrainingData,
  type ResponseVariation,
} from 'src/core/training-data/nlu-training-data';

/** A trained pipeline step: mutates the message in place at parse time. */
export interface NluComponent {
  /** Rasa component name (`DIETClassifier`, ...). */
  readonly name: string;
  /** `training` is true while the pipeline featurizes its own training data. */
  process(message: NluMessage, training?: boolean): void;
  /**
   * Components that wait on I/O (a Duckling server) run this instead of `process` when the
   * pipeline parses asynchronously (`TrainedNlu.parseAsync`); a pipeline without one parses
   * synchronously.
   */
  readonly processAsync?: (message: NluMessage, context: ParseContext) => Promise<void>;
  /** Said at training and at load: a substitute answers in place of what Rasa would run. */
  readonly notice?: string | null;
  /** Plain-JSON state (weights base64-encoded); `null` for stateless components. */
  toJSON(): unknown;
}

/** What an asynchronous parse hands its components. */
export interface ParseContext {
  /** A failure that does not stop the parse (an unreachable Duckling server). */
  readonly onWarning?: (message: string) => void;
}

/** Where a stage sits in the pipeline: 0-based `index` of `total` components. */
export interface ProgressStep {
  readonly index: number;
  readonly total: number;
}

/** Progress callback: stage label, fraction of that stage done (0..1) and its pipeline step. */
export type ProgressCallback = (stage: string, fraction: number, step: ProgressStep) => void;

export interface TrainContext {
  readonly data: NluTrainingData;
  /** The model's language (config.yml `language`). */
  readonly language?: string;
  /** Training messages, already processed by every earlier component. */
  readonly messages: TrainingMessage[];
  readonly seed: number;
  readonly responses: Readonly<Record<string, readonly ResponseVariation[]>>;
  readonly warnings: string[];
  /** Index of this component in the pipeline (for distinct seeds and labels). */
  readonly index: number;
  progress(fraction: number): void;
  /**
   * Threads the component may use (1 = stay on the calling thread). Results must not depend on
   * it: parallel parts are seeded independently and combined in a fixed order.
   */
  readonly threads?: number;
  /** Lets the event loop breathe during long training (progress callbacks, timers). */
  yieldNow(): Promise<void>;
}

/** Reads a typed parameter from a component config, with a clear error on a wrong type. */
export class ParamReader {
  constructor(
    private readonly component: string,
    private readonly params: Readonly<Record<string, unknown>>,
  ) {}

  private fail(key: string, expected: string): never {
    throw new DialogueError(
      'CONFIG.INVALID',
      `${this.component}: parameter '${key}' must be ${expected} (got ${JSON.stringify(this.params[key])})`,
      { component: this.component, parameter: key },
    );
  }

  number(key: string, fallback: number): number {
    const v = this.params[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(key, 'a number');
    return v;
  }

  bool(key: string, fallback: boolean): boolean {
    const v = this.params[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') this.fail(key, 'true or false');
    return v;
  }

  string(key: string, fallback: string): string {
    const v = this.params[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'string') this.fail(key, 'a string');
    return v;
  }

  optionalString(key: string): string | null {
    const v = this.params[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') this.fail(key, 'a string');
    return v;
  }

  stringList(key: string, fallback: readonly string[]): string[] {
    const v = this.params[key];
    if (v === undefined || v === null) return [...fallback];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      this.fail(key, 'a list of strings');
    }
    return v as string[];
  }

  /** min_df / max_df style: int count or float proportion. */
  numberOrNull(key: string, fallback: number | null): number | null {
    const v = this.params[key];
    if (v === undefined) return fallback;
    if (v === null) return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(key, 'a number');
    return v;
  }

  raw(key: string): unknown {
    return this.params[key];
  }
}
