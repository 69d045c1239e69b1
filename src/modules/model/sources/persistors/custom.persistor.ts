import { join, resolve } from 'node:path';
import { DialogueError, ModelPersistor } from 'src/core';
import { findUserModule, requireUserModule } from 'src/platform/modules/user-module';

const METHODS = ['retrieveTar', 'persistTar', 'retrieveTarSize'] as const;
/** Error codes a custom persistor throws (as `error.code`) for "no such model". */
const NOT_FOUND_CODES = new Set(['ENOENT', 'NotFound', 'NoSuchKey']);

function unavailable(kind: string, message: string): DialogueError {
  return new DialogueError(
    'MODEL.REMOTE_STORAGE_UNAVAILABLE',
    `Custom persistor '${kind}': ${message}`,
    {
      parameter: 'remote_storage',
      in: 'body',
    },
  );
}

/** Wraps a user-supplied object, so every failure it throws becomes a clear storage error. */
class CustomPersistor extends ModelPersistor {
  constructor(
    private readonly kind: string,
    private readonly target: Record<(typeof METHODS)[number], (...args: unknown[]) => unknown>,
  ) {
    super();
  }

  private async call<T>(method: (typeof METHODS)[number], args: unknown[]): Promise<T> {
    try {
      return (await this.target[method](...args)) as T;
    } catch (e) {
      if (e instanceof DialogueError) throw e;
      const reason = e instanceof Error ? e.message : String(e);
      const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : null;
      if (typeof code === 'string' && NOT_FOUND_CODES.has(code)) {
        throw new DialogueError(
          'MODEL.NOT_FOUND',
          `Custom persistor '${this.kind}': no model '${String(args[0])}' (${reason}).`,
          { parameter: 'model_file', in: 'body' },
        );
      }
      throw new DialogueError(
        'MODEL.STORAGE_ERROR',
        `Custom persistor '${this.kind}' failed in ${method}: ${reason}`,
        { persistor: this.kind, method },
      );
    }
  }

  retrieveTar(filename: string, targetPath?: string): Promise<void> {
    return this.call('retrieveTar', [filename, targetPath]);
  }

  persistTar(fileKey: string, tarName: string): Promise<void> {
    return this.call('persistTar', [fileKey, tarName]);
  }

  async retrieveTarSize(filename: string, targetPath?: string): Promise<number> {
    const size = await this.call<unknown>('retrieveTarSize', [filename, targetPath]);
    if (typeof size !== 'number' || !Number.isFinite(size) || size < 0) {
      throw new DialogueError(
        'MODEL.STORAGE_ERROR',
        `Custom persistor '${this.kind}': retrieveTarSize must return a number of bytes, got ${JSON.stringify(size)}.`,
        { persistor: this.kind, method: 'retrieveTarSize' },
      );
    }
    return size;
  }
}

/**
 * Loads `<module>.<class>` from the assistant project root: `persistor.S3Like` is the export
 * `S3Like` of `persistor.js` (or `.cjs`, `.ts`, `.cts` — TypeScript is transpiled on load); `storage.gcs.Mine` is `Mine` of `storage/gcs.js`. The
 * class is constructed with the bucket name (BUCKET_NAME, or undefined), as Rasa does.
 */
export function loadCustomPersistor(
  kind: string,
  projectDir: string,
  bucket: string | null,
): ModelPersistor {
  const dot = kind.lastIndexOf('.');
  if (dot <= 0 || dot === kind.length - 1) {
    throw unavailable(kind, 'expected <module>.<class>.');
  }
  const modulePath = kind.slice(0, dot).split('.').join('/');
  const className = kind.slice(dot + 1);
  const root = resolve(projectDir);
  const file = findUserModule(join(root, modulePath));
  if (file === null) {
    throw unavailable(
      kind,
      `no module ${modulePath}.js (or .cjs, .ts, .cts) at the project root ${JSON.stringify('.')}.`,
    );
  }
  let exported: unknown;
  try {
    exported = requireUserModule(file)[className];
  } catch (e) {
    throw unavailable(
      kind,
      `could not load ${modulePath}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  if (typeof exported !== 'function') {
    throw unavailable(kind, `${modulePath} exports no class named ${className}.`);
  }
  let instance: unknown;
  try {
    instance = new (exported as new (bucket?: string) => unknown)(bucket ?? undefined);
  } catch (e) {
    throw unavailable(
      kind,
      `constructing ${className} failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const missing = METHODS.filter(
    (m) => typeof (instance as Record<string, unknown>)[m] !== 'function',
  );
  if (missing.length > 0) {
    throw unavailable(kind, `${className} does not implement ${missing.join(', ')}.`);
  }
  return new CustomPersistor(
    kind,
    instance as Record<(typeof METHODS)[number], (...args: unknown[]) => unknown>,
  );
}
