import { Injectable, Logger } from '@nestjs/common';
import { resolve } from 'node:path';
import { DialogueError, type LoadedAssistant } from 'src/core';
import { ServedModel } from 'src/modules/model/served-model';
import {
  parseModelServerConfig,
  type ModelServerConfig,
} from 'src/modules/model/sources/model-server-client';
import { ModelServerPoller } from 'src/modules/model/sources/model-server-poller';
import { ModelStore } from 'src/modules/model/sources/model-store.service';
import { ApiError } from 'src/platform/errors/api-error';
import { stringify } from 'yaml';

const NO_PATH = 'No path to model file defined in request_body.';

export const DOMAIN_NOT_ACCEPTABLE =
  'Invalid Accept header. Domain can be provided as json ("Accept: application/json") or' +
  'yml ("Accept: application/x-yaml"). Make sure you\'ve set the appropriate Accept header.';

/** The domain in the representation the `Accept` header asks for. */
export interface DomainRepresentation {
  readonly contentType: string;
  readonly body: unknown;
}

/** `PUT /model` parsed: where the new model comes from. */
export interface ReplaceRequest {
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

/**
 * Operations that change or show the served model: `PUT /model`, `DELETE /model`,
 * `GET /domain`. A replacement is built completely before it is swapped in with one
 * assignment, so requests never see a half-loaded model and a failure keeps the old one.
 */
@Injectable()
export class ModelAdminService {
  private readonly logger = new Logger(ModelAdminService.name);

  constructor(
    private readonly served: ServedModel,
    private readonly store: ModelStore,
    private readonly poller: ModelServerPoller,
  ) {}

  /**
   * `PUT /model`: sources in the spec's order — `model_file` when that path exists
   * locally, then `model_server` (polled afterwards when it has a `wait_time_between_pulls`),
   * then `remote_storage` with `model_file` as the model's name. Every failure leaves the
   * served model as it was.
   */
  async replace(request: ReplaceRequest): Promise<LoadedAssistant> {
    const local =
      request.modelFile === null ? null : await this.store.loadLocal(resolve(request.modelFile));
    if (local !== null) {
      this.poller.stop();
      this.store.swap(local, 'local');
      return local;
    }
    if (request.modelServer !== null) {
      const server = request.modelServer;
      const { assistant, etag } = await this.store.pull(server);
      this.store.swap(assistant, 'model_server', etag);
      if (server.waitTimeBetweenPulls !== null && server.waitTimeBetweenPulls > 0) {
        this.poller.follow(server);
      } else {
        this.poller.stop();
      }
      return assistant;
    }
    if (request.remoteStorage !== null) {
      if (request.modelFile === null) {
        throw new DialogueError(
          'REQUEST.INVALID_PARAMETER',
          "Loading from 'remote_storage' needs the model's name in 'model_file'.",
          { parameter: 'model_file', in: 'body' },
        );
      }
      const assistant = await this.store.retrieve(request.remoteStorage, request.modelFile);
      this.poller.stop();
      this.store.swap(assistant, 'remote_storage');
      return assistant;
    }
    throw new DialogueError(
      'MODEL.NOT_FOUND',
      `Agent with name '${request.modelFile ?? ''}' could not be loaded: no model archive at that path.`,
      { parameter: 'model_file', in: 'body' },
    );
  }

  /** `DELETE /model`: afterwards model routes answer 409. */
  unload(): void {
    this.poller.stop();
    this.store.unload();
    this.logger.log('model unloaded (DELETE /model)');
  }

  /**
   * `GET /domain` as Rasa negotiates it: an `Accept` ending in `json` (default when
   * absent) → JSON, ending in `yml`/`yaml` → YAML text; anything else (also a bare wildcard) → 406.
   */
  domain(accept: string | undefined): DomainRepresentation {
    const assistant = this.served.require();
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
