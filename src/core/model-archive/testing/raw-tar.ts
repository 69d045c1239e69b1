/**
 * Test helpers that build tar archives byte by byte, so that specs can craft archives the
 * `tar` package refuses to create (path traversal, links, devices, lying sizes, …).
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { type ModelManifest } from 'src/core/model-archive/manifest';

/** Tar type flags: 0 file, 1 hard link, 2 symlink, 3 char device, 4 block device, 5 dir, 6 FIFO, x pax, L GNU long name. */
export type RawType = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | 'x' | 'L' | 'S';

export interface RawEntry {
  readonly path: string;
  readonly type?: RawType;
  readonly data?: Buffer | string;
  readonly linkpath?: string;
  /** Declared size when it must differ from the data (a lying header). */
  readonly size?: number;
}

function field(block: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new Error(`tar field too long: ${value}`);
  bytes.copy(block, offset);
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

/** One 512-byte ustar header with a valid checksum. */
export function tarHeader(entry: RawEntry, size: number): Buffer {
  const block = Buffer.alloc(512);
  field(block, 0, 100, entry.path);
  field(block, 100, 8, octal(entry.type === '5' ? 0o755 : 0o644, 8));
  field(block, 108, 8, octal(0, 8));
  field(block, 116, 8, octal(0, 8));
  field(block, 124, 12, octal(size, 12));
  field(block, 136, 12, octal(Math.floor(Date.UTC(2024, 0, 1) / 1000), 12));
  field(block, 156, 1, entry.type ?? '0');
  field(block, 157, 100, entry.linkpath ?? '');
  field(block, 257, 6, 'ustar\0');
  field(block, 263, 2, '00');
  field(block, 329, 8, octal(0, 8));
  field(block, 337, 8, octal(0, 8));
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  field(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** An uncompressed tar of the entries, with the two zero blocks at the end unless `end: false`. */
export function rawTar(entries: readonly RawEntry[], opts: { end?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data =
      typeof entry.data === 'string'
        ? Buffer.from(entry.data, 'utf8')
        : (entry.data ?? Buffer.alloc(0));
    parts.push(tarHeader(entry, entry.size ?? data.length), data);
    const padding = (512 - (data.length % 512)) % 512;
    parts.push(Buffer.alloc(padding));
  }
  if (opts.end !== false) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A pax extended header body (`<len> key=value\n` records). */
export function paxRecords(records: Readonly<Record<string, string>>): string {
  let out = '';
  for (const [key, value] of Object.entries(records)) {
    const body = ` ${key}=${value}\n`;
    let length = body.length + 1;
    while (`${length}${body}`.length !== length) length = `${length}${body}`.length;
    out += `${length}${body}`;
  }
  return out;
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Versions used across the specs. */
export const SERVER = { parleyVersion: '1.4.2', minimumCompatibleVersion: '1.2.0' } as const;

/** A well-formed manifest for the files (checksums computed), with overrides. */
export function manifestFor(
  files: Readonly<Record<string, Buffer | string>>,
  overrides: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const manifest: ModelManifest = {
    format: 'parley-model',
    format_version: 1,
    model_id: '0123456789abcdef0123456789abcdef',
    fingerprint: sha256('fingerprint'),
    assistant_id: 'test-assistant',
    parley_version: '1.4.0',
    minimum_compatible_version: '1.2.0',
    trained_at: '2024-05-01T12:00:00.000Z',
    components: ['WhitespaceTokenizer'],
    files: Object.fromEntries(Object.entries(files).map(([path, data]) => [path, sha256(data)])),
  };
  return { ...manifest, ...overrides };
}

/** A gzip-compressed tar: `manifest.json` (from `manifest`) followed by `entries`. */
export function craftArchive(
  manifest: Readonly<Record<string, unknown>> | null,
  entries: readonly RawEntry[],
  opts: { end?: boolean } = {},
): Buffer {
  const head: RawEntry[] =
    manifest === null ? [] : [{ path: 'manifest.json', data: JSON.stringify(manifest) }];
  return gzipSync(rawTar([...head, ...entries], opts));
}
