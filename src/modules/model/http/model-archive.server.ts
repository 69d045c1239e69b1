import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  MODEL_ARCHIVE_SUFFIX,
  readModelManifest,
  scanModelDirectory,
} from 'src/core/model-archive';
import { COMPATIBILITY } from 'src/modules/model/sources/model-loader';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { ApiError } from 'src/platform/errors/api-error';

/** An archive ready to serve. */
export interface ServedArchive {
  readonly filename: string;
  readonly hash: string;
  readonly bytes: Buffer;
}

const NAME = /^[A-Za-z0-9_][\w.-]*$/;

/** 404: the model-server contract's "no model" (pullers keep what they serve). */
function notFound(name: string): ApiError {
  return new ApiError('HTTP.NOT_FOUND', `No model named '${name}' on this server.`, {
    parameter: 'name',
    in: 'path',
  });
}

/**
 * Finds the archives `GET /models/<name>` serves: those of the `--model` directory (or the
 * `--model` file itself), verified by their manifest; `latest` is the newest by `trained_at`.
 */
@Injectable()
export class ModelArchiveServer {
  private cache = new Map<string, { mtimeMs: number; size: number; archive: ServedArchive }>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `If-None-Match` against our hash: a list of (weak or strong, quoted or bare) tags, or `*`. */
  static matches(header: string, hash: string): boolean {
    return header
      .split(',')
      .map((t) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, ''))
      .some((t) => t === hash || t === '*');
  }

  private async path(name: string): Promise<string> {
    const root = this.config.files.model;
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(root)).isDirectory();
    } catch {
      throw notFound(name);
    }
    if (name === 'latest') {
      if (!isDirectory) return root;
      const scan = await scanModelDirectory(root, { compatibility: COMPATIBILITY });
      if (scan.latest === null) throw notFound(name);
      return scan.latest.path;
    }
    if (!NAME.test(name)) throw notFound(name);
    const file = name.endsWith(MODEL_ARCHIVE_SUFFIX) ? name : `${name}${MODEL_ARCHIVE_SUFFIX}`;
    if (!isDirectory) {
      if (basename(root) !== file) throw notFound(name);
      return root;
    }
    return join(root, file);
  }

  async find(name: string): Promise<ServedArchive> {
    const path = await this.path(name);
    let info;
    try {
      info = await stat(path);
    } catch {
      throw notFound(name);
    }
    if (!info.isFile()) throw notFound(name);
    const cached = this.cache.get(path);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) {
      return cached.archive;
    }
    try {
      await readModelManifest(path);
    } catch {
      throw notFound(name);
    }
    const bytes = await readFile(path);
    const archive = {
      filename: basename(path),
      hash: createHash('sha256').update(bytes).digest('hex'),
      bytes,
    };
    this.cache.clear();
    this.cache.set(path, { mtimeMs: info.mtimeMs, size: info.size, archive });
    return archive;
  }
}
