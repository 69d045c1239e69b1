import { Injectable, Logger } from '@nestjs/common';
import { resolve } from 'node:path';
import { DialogueError } from 'src/core';
import { AssistantRegistry, type LoadedAssistant } from 'src/modules/assistant/assistant.registry';
import { ApiError } from 'src/platform/errors/api-error';
import { stringify } from 'yaml';
import { loadModelArchive, resolveModelPath } from './model-loader';
import {
  DEFAULT_FETCH_LIMITS,
  fetchModelFromServer,
  parseModelServerConfig,
  type FetchLimits,
  type ModelServerConfig,
} from './model-server';

const NO_PATH = 'No path to model file defined in request_body.';

export const DOMAIN_NOT_ACCEPTABLE =
  'Invalid Accept header. Domain can be provided as json ("Accept: application/json") or' +
  'yml ("Accept: application/x-yaml"). Make sure you\'ve set the appropriate Accept header.';

/** The domain in the representation the `Accept` header asks for. */
export interface DomainRepresentation {
  readonly contentType: string;
  readonly body: unknown;
}

interface ReplaceRequest {
  readonly modelFile: string | null;
  readonly modelServer: ModelServerConfig | null;
  readonly remoteStorage: string | null;
}

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DialogueError('REQUEST.INVALID_PARAMETER', `'${key}' must be a non-empty string.`, {
      parameter: key,
      in: 'body',
    });
  }
  return value;
}

/** Validates the whole `PUT /model` body before anything is loaded. */
export function parseReplaceRequest(body: unknown): ReplaceRequest {
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    Object.keys(body).length === 0
  ) {
    throw new DialogueError('REQUEST.BODY_MISSING', NO_PATH);
  }
  const fields = body as Record<string, unknown>;
  const modelFile = optionalString(fields, 'model_file');
  const remoteStorage = optionalString(fields, 'remote_storage');
  const modelServer =
    fields.model_server === undefined || fields.model_server === null
      ? null
      : parseModelServerConfig(fields.model_server);
  if (modelFile === null && modelServer === null && remoteStorage === null) {
    throw new DialogueError('REQUEST.BODY_MISSING', NO_PATH);
  }
  return { modelFile, modelServer, remoteStorage };
}

/** Anything that escapes the loader becomes a 400 `LoadingError`; DialogueErrors keep their code. */
function asLoadingError(e: unknown, source: string): DialogueError {
  if (e instanceof DialogueError) return e;
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
 * Operations that change or show the served model: `PUT /model`, `DELETE /model`,
 * `GET /domain`. A replacement is built completely before it is swapped in with one
 * assignment, so requests never see a half-loaded model and a failure keeps the old one.
 */
@Injectable()
export class ModelAdminService {
  private readonly logger = new Logger(ModelAdminService.name);
  /** ETag of the model last pulled from a model server, while that model is served. */
  private pulled: { assistant: LoadedAssistant; etag: string } | null = null;
  /** Overridable by tests. */
  fetchLimits: FetchLimits = DEFAULT_FETCH_LIMITS;

  constructor(private readonly registry: AssistantRegistry) {}

  /**
   * Op 17 (`PUT /model`): sources in the spec's order — `model_file` when that path exists
   * locally, then `model_server`, then `remote_storage` (not available: 400); a `model_file`
   * that exists nowhere is a 400. Every failure leaves the served model as it was.
   */
  async replace(body: unknown): Promise<LoadedAssistant> {
    const request = parseReplaceRequest(body);
    let assistant: LoadedAssistant | null = null;
    let etag: string | null = null;
    const localPath =
      request.modelFile === null ? null : await resolveModelPath(resolve(request.modelFile));
    if (localPath !== null) {
      try {
        assistant = await loadModelArchive(localPath);
      } catch (e) {
        throw asLoadingError(e, localPath);
      }
    } else if (request.modelServer !== null) {
      const current = this.registry.current();
      const fingerprint =
        this.pulled !== null && this.pulled.assistant === current ? this.pulled.etag : null;
      const download = await fetchModelFromServer(
        request.modelServer,
        fingerprint,
        this.fetchLimits,
      );
      try {
        assistant = await loadModelArchive(download.path);
        etag = download.etag;
      } catch (e) {
        throw asLoadingError(e, request.modelServer.url);
      } finally {
        await download.cleanup();
      }
    } else if (request.remoteStorage !== null) {
      throw new DialogueError(
        'MODEL.REMOTE_STORAGE_UNAVAILABLE',
        `Remote storage ('${request.remoteStorage}') is not available in this version of Parley; the model was not loaded. Use 'model_file' (a local path) or 'model_server' instead.`,
        { parameter: 'remote_storage', in: 'body' },
      );
    } else {
      throw new DialogueError(
        'MODEL.NOT_FOUND',
        `Agent with name '${request.modelFile ?? ''}' could not be loaded: no model archive at that path.`,
        { parameter: 'model_file', in: 'body' },
      );
    }
    this.registry.load(assistant);
    this.pulled = etag === null ? null : { assistant, etag };
    this.logger.log(
      { modelId: assistant.modelId, modelFile: assistant.modelFile },
      'model replaced (PUT /model)',
    );
    return assistant;
  }

  /** Op 18 (`DELETE /model`): afterwards model routes answer 409. */
  unload(): void {
    this.registry.unload();
    this.pulled = null;
    this.logger.log('model unloaded (DELETE /model)');
  }

  /**
   * Op 19 (`GET /domain`) as Rasa negotiates it: an `Accept` ending in `json` (default when
   * absent) → JSON, ending in `yml`/`yaml` → YAML text; anything else (also a bare wildcard) → 406.
   */
  domain(accept: string | undefined): DomainRepresentation {
    const assistant = this.registry.require();
    const wanted = (accept ?? 'application/json').trim().toLowerCase();
    if (wanted.endsWith('json')) {
      return { contentType: 'application/json', body: assistant.domain.toJSON() };
    }
    if (wanted.endsWith('yml') || wanted.endsWith('yaml')) {
      return {
        contentType: 'application/x-yaml; charset=utf-8',
        body: stringify(assistant.domain.toJSON()),
      };
    }
    throw new ApiError('HTTP.NOT_ACCEPTABLE', DOMAIN_NOT_ACCEPTABLE);
  }
}
