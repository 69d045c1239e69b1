import { Inject, Injectable, Logger } from '@nestjs/common';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { DialogueError, remoteModelKey, type LoadedAssistant, type ModelPersistor } from 'src/core';
import { DEFAULT_MAX_BYTES, type ArchiveLimits } from 'src/core/model-archive';
import { ServedModel } from 'src/modules/model/served-model';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { type RemoteStorageSettings } from 'src/platform/config/remote-storage-settings';
import { loadModelArchive, resolveModelPath } from './model-loader';
import {
  DEFAULT_FETCH_LIMITS,
  fetchModelFromServer,
  type FetchLimits,
  type ModelServerConfig,
} from './model-server-client';
import { createPersistor } from './persistors/create-persistor';

/** Default folder of models in a bucket. */
export const DEFAULT_BUCKET_FOLDER = 'models';

export const REMOTE_STORAGE_PATH_DEPRECATED =
  'REMOTE_STORAGE_PATH is deprecated and will be removed in Parley 4.0 (as in Rasa); give the path with --model (loading) or --out (training) instead.';

/** Where a model came from, for logs. */
export type ModelSource = 'local' | 'model_server' | 'remote_storage';

/** The object key a trained archive is uploaded to: `<out | REMOTE_STORAGE_PATH | models>/<name>`. */
export function persistKey(archivePath: string, out: string | null, storagePath: string | null) {
  const folder = (out ?? storagePath ?? DEFAULT_BUCKET_FOLDER).replace(/^\/+|\/+$/g, '');
  return folder === '' ? basename(archivePath) : posix.join(folder, basename(archivePath));
}

/** Keys tried for `name` in remote storage: the name itself, then `models/<name>` for a bare name. */
export function retrieveKeys(name: string, storagePath: string | null): string[] {
  const key = remoteModelKey(name, storagePath);
  if (storagePath !== null || key.includes('/')) return [key];
  return [key, posix.join(DEFAULT_BUCKET_FOLDER, key)];
}

/**
 * Downloads `name` from remote storage into a temporary directory and loads it (size checked
 * first with `retrieveTarSize`). Shared by the server and `parley shell/test`.
 */
export async function loadFromPersistor(
  persistor: ModelPersistor,
  name: string,
  storagePath: string | null,
  maxBytes = DEFAULT_MAX_BYTES,
  limits: ArchiveLimits = {},
): Promise<LoadedAssistant> {
  const keys = retrieveKeys(name, storagePath);
  let key: string | null = null;
  let size = 0;
  let notFound: unknown = null;
  for (const candidate of keys) {
    try {
      size = await persistor.retrieveTarSize(candidate);
      key = candidate;
      break;
    } catch (e) {
      if (e instanceof DialogueError && e.code === 'MODEL.NOT_FOUND') {
        notFound ??= e;
        continue;
      }
      throw e;
    }
  }
  if (key === null) {
    if (keys.length === 1) throw notFound as Error;
    const why = notFound instanceof Error ? notFound.message : '';
    throw new DialogueError(
      'MODEL.NOT_FOUND',
      `No model '${name}' in remote storage (tried ${keys.join(', ')}): ${why}`,
      { parameter: 'model_file', in: 'body' },
    );
  }
  if (size > maxBytes) {
    throw new DialogueError(
      'MODEL.INVALID_ARCHIVE',
      `Model '${key}' in remote storage is ${size} bytes, larger than the limit of ${maxBytes}.`,
      { reason: 'too_large' },
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'parley-remote-'));
  try {
    await persistor.retrieveTar(key, dir);
    const assistant = await loadModelArchive(join(dir, basename(key)), limits);
    return assistant;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The setting behind each archive limit, named in the failure so that operators can raise it. */
const LIMIT_SETTINGS: Readonly<Record<string, string>> = {
  maxFileBytes: 'PARLEY_MODEL_MAX_FILE_BYTES',
  maxUnpackedBytes: 'PARLEY_MODEL_MAX_UNPACKED_BYTES',
  maxCompressionRatio: 'PARLEY_MODEL_MAX_COMPRESSION_RATIO',
};

/** Anything that escapes the loader becomes a 400 `LoadingError`; DialogueErrors keep their code. */
export function asLoadingError(e: unknown, source: string): DialogueError {
  if (e instanceof DialogueError) {
    const limitName = e.details['limitName'];
    const setting = typeof limitName === 'string' ? LIMIT_SETTINGS[limitName] : undefined;
    if (setting === undefined) return e;
    return new DialogueError(e.code, `${e.message} (limit set by ${setting})`, {
      ...e.details,
      setting,
    });
  }
  const reason = e instanceof Error ? e.message : String(e);
  return new DialogueError(
    'MODEL.INVALID_ARCHIVE',
    `${source}: could not load the model: ${reason}`,
    {
      reason: 'unreadable',
    },
  );
}

/**
 * The model store: loads models from local disk, a model server or remote storage, swaps them
 * into the ServedModel with one assignment (a failure anywhere keeps the served model),
 * and uploads trained archives to remote storage. Keeps the ETag of the model last pulled from a
 * model server, and no reference to any replaced model.
 */
@Injectable()
export class ModelStore {
  private readonly logger = new Logger(ModelStore.name);
  /** ETag of the model last pulled from a model server, while that model is served. */
  private pulled: { modelId: string; etag: string } | null = null;
  private warnedStoragePath = false;
  /** Overridable by tests. */
  fetchLimits: FetchLimits = DEFAULT_FETCH_LIMITS;

  constructor(
    private readonly served: ServedModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The ETag to send as `If-None-Match`: that of the served model, if it came from a server. */
  currentEtag(): string | null {
    const current = this.served.current();
    return this.pulled !== null && current !== null && current.modelId === this.pulled.modelId
      ? this.pulled.etag
      : null;
  }

  /** Swaps `assistant` in. In-flight requests finish on the model they took. */
  swap(assistant: LoadedAssistant, source: ModelSource, etag: string | null = null): void {
    this.served.load(assistant);
    this.pulled = etag === null ? null : { modelId: assistant.modelId, etag };
    this.logger.log(
      { modelId: assistant.modelId, modelFile: assistant.modelFile, source },
      'model loaded',
    );
    // What answers in place of Rasa's components (built-in Duckling, the spaCy substitute).
    for (const notice of assistant.nlu?.notices ?? []) this.logger.warn(notice);
  }

  unload(): void {
    this.served.unload();
    this.pulled = null;
  }

  /** A local archive, or the newest archive of a directory; null when there is none. */
  async loadLocal(path: string): Promise<LoadedAssistant | null> {
    const limits = this.config.modelArchive;
    let resolved: string | null;
    try {
      resolved = await resolveModelPath(path, limits);
    } catch (e) {
      throw asLoadingError(e, path);
    }
    if (resolved === null) return null;
    try {
      return await loadModelArchive(resolved, limits);
    } catch (e) {
      throw asLoadingError(e, resolved);
    }
  }

  /** One fetch from a model server (throws on 204/304/404, errors and bad archives). */
  async pull(server: ModelServerConfig): Promise<{ assistant: LoadedAssistant; etag: string }> {
    const download = await fetchModelFromServer(server, this.currentEtag(), this.fetchLimits);
    try {
      return {
        assistant: await loadModelArchive(download.path, this.config.modelArchive),
        etag: download.etag,
      };
    } catch (e) {
      throw asLoadingError(e, server.url);
    } finally {
      await download.cleanup();
    }
  }

  private storageSettings(): RemoteStorageSettings {
    const settings = this.config.remoteStorage;
    if (settings.path !== null && !this.warnedStoragePath) {
      this.warnedStoragePath = true;
      this.logger.warn({ REMOTE_STORAGE_PATH: settings.path }, REMOTE_STORAGE_PATH_DEPRECATED);
    }
    return settings;
  }

  persistor(kind: string): ModelPersistor {
    return createPersistor(kind, this.config.remoteStorage, this.config.projectDir);
  }

  /** Downloads the model `name` from remote storage `kind` and loads it (not swapped in). */
  async retrieve(kind: string, name: string): Promise<LoadedAssistant> {
    const persistor = this.persistor(kind);
    const settings = this.storageSettings();
    try {
      return await loadFromPersistor(
        persistor,
        name,
        settings.path,
        this.fetchLimits.maxBytes,
        this.config.modelArchive,
      );
    } catch (e) {
      throw asLoadingError(e, `${kind}:${name}`);
    }
  }

  /** Uploads a trained archive to the server's remote storage; returns the object key. */
  async persist(kind: string, archivePath: string, out: string | null = null): Promise<string> {
    const persistor = this.persistor(kind);
    const key = persistKey(archivePath, out, this.storageSettings().path);
    await persistor.persistTar(key, archivePath);
    this.logger.log({ key, remoteStorage: kind }, 'model uploaded to remote storage');
    return key;
  }

  /**
   * `parley run`: the model of `--remote-storage` + `--model <name>`, else `--model` (a file or
   * the newest archive of a directory). Without one the server runs and model routes answer 409.
   * A model server in endpoints.yml is pulled afterwards (ModelServerPoller).
   */
  async loadAtStart(): Promise<void> {
    const { model, remoteStorage } = this.config.files;
    try {
      const assistant =
        remoteStorage !== null
          ? await this.retrieve(remoteStorage, model)
          : await this.loadLocal(model);
      if (assistant === null) {
        this.logger.warn(
          { model },
          this.served.current() === null
            ? 'no model found; model routes answer 409 until one is loaded'
            : 'no model found; serving the domain file',
        );
        return;
      }
      this.swap(assistant, remoteStorage !== null ? 'remote_storage' : 'local');
    } catch (e) {
      this.logger.error(
        { model, remoteStorage, error: e instanceof Error ? e.message : String(e) },
        'could not load the model; running without it',
      );
    }
  }
}
