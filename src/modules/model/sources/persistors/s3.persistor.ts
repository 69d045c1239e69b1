import type * as Minio from 'minio';
import type { Client } from 'minio';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DialogueError, ModelPersistor } from 'src/core';
import { DEFAULT_MAX_BYTES } from 'src/core/model-archive';
import { type RemoteStorageSettings } from 'src/platform/config/remote-storage-settings';

function unavailable(message: string, missing: string[]): DialogueError {
  return new DialogueError('MODEL.REMOTE_STORAGE_UNAVAILABLE', message, {
    parameter: 'remote_storage',
    in: 'body',
    missing,
  });
}

/** Error codes of S3 meaning "no such object / bucket". */
const NOT_FOUND_CODES = new Set(['NotFound', 'NoSuchKey', 'NoSuchBucket']);

function errorCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * `aws` remote storage: any S3-compatible store through the `minio` client (AWS S3 itself, MinIO,
 * Ceph, ...). Reads BUCKET_NAME, AWS_ENDPOINT_URL (absent → AWS S3 of AWS_DEFAULT_REGION),
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
 */
export class S3Persistor extends ModelPersistor {
  private readonly client: Client;
  readonly bucket: string;

  constructor(
    settings: RemoteStorageSettings,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {
    super();
    const missing: string[] = [];
    if (settings.bucket === null) missing.push('BUCKET_NAME');
    if (settings.accessKeyId === null) missing.push('AWS_ACCESS_KEY_ID');
    if (settings.secretAccessKey === null) missing.push('AWS_SECRET_ACCESS_KEY');
    if (settings.endpointUrl === null && settings.region === null) {
      missing.push('AWS_ENDPOINT_URL or AWS_DEFAULT_REGION');
    }
    if (missing.length > 0) {
      throw unavailable(
        `Remote storage 'aws' is not configured: set ${missing.join(', ')} in the environment.`,
        missing,
      );
    }
    this.bucket = settings.bucket as string;
    const region = settings.region ?? 'us-east-1';
    let endPoint = `s3.${region}.amazonaws.com`;
    let port: number | undefined;
    let useSSL = true;
    let pathStyle = false;
    if (settings.endpointUrl !== null) {
      const url = new URL(settings.endpointUrl);
      endPoint = url.hostname;
      useSSL = url.protocol === 'https:';
      port = url.port === '' ? undefined : Number(url.port);
      // S3-compatible servers (MinIO, test servers) answer path-style requests.
      pathStyle = true;
    }
    // minio loads only when an S3 persistor is configured (start-up time).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const { Client: S3Client } = require('minio') as typeof Minio;
    this.client = new S3Client({
      endPoint,
      ...(port === undefined ? {} : { port }),
      useSSL,
      pathStyle,
      region,
      accessKey: settings.accessKeyId as string,
      secretKey: settings.secretAccessKey as string,
      ...(settings.sessionToken === null ? {} : { sessionToken: settings.sessionToken }),
    });
  }

  private failure(e: unknown, key: string, doing: string): DialogueError {
    if (e instanceof DialogueError) return e;
    const code = errorCode(e);
    if (code !== undefined && NOT_FOUND_CODES.has(code)) {
      return new DialogueError(
        'MODEL.NOT_FOUND',
        `Model '${key}' was not found in bucket '${this.bucket}' (${code}).`,
        { parameter: 'model_file', in: 'body', bucket: this.bucket, key },
      );
    }
    const reason = e instanceof Error ? e.message : String(e);
    return new DialogueError(
      'MODEL.STORAGE_ERROR',
      `Could not ${doing} '${key}' in bucket '${this.bucket}': ${reason}`,
      { bucket: this.bucket, key },
    );
  }

  async retrieveTarSize(filename: string): Promise<number> {
    try {
      return (await this.client.statObject(this.bucket, filename)).size;
    } catch (e) {
      throw this.failure(e, filename, 'read the size of');
    }
  }

  async retrieveTar(filename: string, targetPath?: string): Promise<void> {
    const dir = resolve(targetPath ?? '.');
    await mkdir(dir, { recursive: true });
    const target = join(dir, basename(filename));
    const maxBytes = this.maxBytes;
    try {
      const stream = await this.client.getObject(this.bucket, filename);
      let received = 0;
      await pipeline(
        stream,
        async function* cap(source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            received += chunk.length;
            if (received > maxBytes) {
              throw new DialogueError(
                'MODEL.INVALID_ARCHIVE',
                `Model '${filename}' is larger than ${maxBytes} bytes.`,
                { reason: 'too_large' },
              );
            }
            yield chunk;
          }
        },
        createWriteStream(target),
      );
    } catch (e) {
      await rm(target, { force: true });
      throw this.failure(e, filename, 'download');
    }
  }

  async persistTar(fileKey: string, tarName: string): Promise<void> {
    try {
      await this.client.fPutObject(this.bucket, fileKey, tarName, {
        'Content-Type': 'application/gzip',
      });
    } catch (e) {
      throw this.failure(e, fileKey, 'upload');
    }
  }
}
