import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DialogueError } from 'src/core';
import { DEFAULT_MAX_BYTES } from 'src/core/model-archive';
import { redactText, redactUrl } from 'src/platform/logging/redact';

/** Rasa's EndpointConfig for a model server (`model_server` of `PUT /model`). */
export interface ModelServerConfig {
  readonly url: string;
  readonly params: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly basicAuth: { readonly username: string; readonly password: string } | null;
  readonly token: string | null;
  readonly tokenName: string;
  readonly waitTimeBetweenPulls: number | null;
}

/** How a model server fetch is bounded. */
export interface FetchLimits {
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { timeoutMs: 30_000, maxBytes: DEFAULT_MAX_BYTES };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(problem: string): DialogueError {
  return new DialogueError(
    'REQUEST.INVALID_PARAMETER',
    `Supplied 'model_server' is not valid. Error: ${problem}`,
    { parameter: 'model_server', in: 'body' },
  );
}

/**
 * Validates the shape of a `model_server` value. Unknown keys are accepted (Rasa passes them on
 * as kwargs); known keys with a wrong type, or a missing/non-http(s) `url`, are a 400.
 */
export function parseModelServerConfig(value: unknown): ModelServerConfig {
  if (!isPlainObject(value)) throw invalid('expected an object with at least a "url".');
  const { url, params, headers, basic_auth, token, token_name, wait_time_between_pulls } = value;
  if (typeof url !== 'string' || url.trim() === '') throw invalid('"url" must be a string.');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`"url" is not a valid URL: ${JSON.stringify(redactText(url))}.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(`"url" must use http or https, got "${parsed.protocol.replace(/:$/, '')}".`);
  }
  if (params !== undefined && params !== null && !isPlainObject(params)) {
    throw invalid('"params" must be an object.');
  }
  if (headers !== undefined && headers !== null && !isPlainObject(headers)) {
    throw invalid('"headers" must be an object.');
  }
  const headerValues: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (typeof v !== 'string' && typeof v !== 'number') {
      throw invalid(`header "${k}" must be a string.`);
    }
    headerValues[k] = String(v);
  }
  let basicAuth: ModelServerConfig['basicAuth'] = null;
  if (basic_auth !== undefined && basic_auth !== null) {
    if (
      !isPlainObject(basic_auth) ||
      typeof basic_auth.username !== 'string' ||
      typeof basic_auth.password !== 'string'
    ) {
      throw invalid('"basic_auth" must be an object with string "username" and "password".');
    }
    basicAuth = { username: basic_auth.username, password: basic_auth.password };
  }
  if (token !== undefined && token !== null && typeof token !== 'string') {
    throw invalid('"token" must be a string.');
  }
  if (token_name !== undefined && token_name !== null && typeof token_name !== 'string') {
    throw invalid('"token_name" must be a string.');
  }
  if (
    wait_time_between_pulls !== undefined &&
    wait_time_between_pulls !== null &&
    (typeof wait_time_between_pulls !== 'number' || !Number.isFinite(wait_time_between_pulls))
  ) {
    throw invalid('"wait_time_between_pulls" must be a number or null.');
  }
  return {
    url,
    params: params ?? {},
    headers: headerValues,
    basicAuth,
    token: token ?? null,
    tokenName: token_name ?? 'token',
    waitTimeBetweenPulls: wait_time_between_pulls ?? null,
  };
}

function serverError(message: string, details: Record<string, unknown> = {}): DialogueError {
  return new DialogueError('MODEL.SERVER_ERROR', message, details);
}

/** A model downloaded to a temporary file; `cleanup()` removes it. */
export interface DownloadedModel {
  readonly path: string;
  readonly etag: string;
  cleanup(): Promise<void>;
}

/**
 * Fetches a model once from a model server as Rasa does: GET with `If-None-Match`, query
 * `params` plus `{token_name: token}`, basic auth and the configured headers. Only a 200 with an
 * `ETag` header is a model; its body is written (size-capped) to a temporary file named after
 * the response's `filename` header (default `model.tar.gz`).
 */
export async function fetchModelFromServer(
  config: ModelServerConfig,
  currentFingerprint: string | null,
  limits: FetchLimits = DEFAULT_FETCH_LIMITS,
): Promise<DownloadedModel> {
  const url = new URL(config.url);
  for (const [k, v] of Object.entries(config.params)) {
    // As Python's requests: a list repeats the key; null leaves it out.
    for (const item of Array.isArray(v) ? (v as unknown[]) : [v]) {
      if (item === undefined || item === null) continue;
      url.searchParams.append(k, typeof item === 'string' ? item : JSON.stringify(item));
    }
  }
  if (config.token !== null) url.searchParams.set(config.tokenName, config.token);
  const headers: Record<string, string> = {
    ...config.headers,
    'If-None-Match': currentFingerprint ?? randomUUID().replace(/-/g, ''),
  };
  // Credentials in the URL (`http://user:pw@host/…`) are basic auth, as aiohttp reads them;
  // fetch refuses such URLs, so they move to the header (the explicit `basic_auth` wins).
  const userinfo =
    url.username === ''
      ? null
      : {
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        };
  url.username = '';
  url.password = '';
  const basicAuth = config.basicAuth ?? userinfo;
  if (basicAuth !== null) {
    const { username, password } = basicAuth;
    headers.Authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }
  // Answers and logs name the server without its credentials (userinfo, token parameters).
  const where = { url: redactUrl(config.url) };
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'GET',
      headers,
      redirect: 'follow',
      signal: AbortSignal.timeout(limits.timeoutMs),
    });
  } catch (e) {
    const name = typeof e === 'object' && e !== null ? (e as { name?: unknown }).name : undefined;
    const reason =
      name === 'TimeoutError' || name === 'AbortError'
        ? `no answer within ${limits.timeoutMs / 1000} s`
        : e instanceof Error
          ? ((e.cause instanceof Error ? e.cause.message : undefined) ?? e.message)
          : String(e);
    throw serverError(
      `Could not fetch the model from the model server: ${redactText(reason)}.`,
      where,
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    const why =
      response.status === 204 || response.status === 304
        ? 'no new model'
        : response.status === 404
          ? 'no model'
          : 'an unexpected status';
    throw serverError(
      `The model server answered ${response.status} (${why}); the model was not loaded.`,
      { ...where, status: response.status },
    );
  }
  const etag = response.headers.get('etag');
  if (etag === null || etag.trim() === '') {
    await response.body?.cancel().catch(() => undefined);
    throw serverError(
      'The model server answered without an ETag header; the model was not loaded.',
      where,
    );
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw serverError(
      `The model from the model server is larger than ${limits.maxBytes} bytes.`,
      where,
    );
  }
  const headerName = basename(response.headers.get('filename') ?? '').replace(/[^\w.-]/g, '_');
  const name = headerName === '' || /^\.+$/.test(headerName) ? 'model.tar.gz' : headerName;
  const dir = await mkdtemp(join(tmpdir(), 'parley-model-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, name);
  try {
    if (response.body === null) throw new Error('empty body');
    let received = 0;
    const body = Readable.fromWeb(response.body);
    await pipeline(
      body,
      async function* cap(source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          received += chunk.length;
          if (received > limits.maxBytes) {
            throw serverError(
              `The model from the model server is larger than ${limits.maxBytes} bytes.`,
              where,
            );
          }
          yield chunk;
        }
      },
      createWriteStream(path),
    );
  } catch (e) {
    await cleanup();
    if (e instanceof DialogueError) throw e;
    const reason = e instanceof Error ? e.message : String(e);
    throw serverError(`Could not download the model from the model server: ${reason}.`, where);
  }
  return { path, etag: etag.trim(), cleanup };
}
