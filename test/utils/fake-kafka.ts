import { createServer, type Server, type Socket } from 'node:net';

/** One record the fake broker accepted. */
export interface KafkaRecord {
  readonly topic: string;
  readonly partition: number;
  readonly key: string | null;
  readonly value: string;
  readonly headers: Record<string, string>;
  /** The acks of the Produce request that carried it. */
  readonly acks: number;
}

/**
 * A single-node Kafka broker on loopback speaking just enough of the wire protocol for a
 * kafkajs producer: ApiVersions (v0–v2), Metadata v0 (every topic asked for exists, with
 * `partitions` partitions led by this node) and Produce v3 (record batches v2, uncompressed),
 * written from the protocol's published request/response layouts. `stop()` closes every
 * connection and stops listening (a broker outage); `start()` listens on the same port again.
 */
export interface FakeKafka {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly records: KafkaRecord[];
  /** Resolves once `n` records arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const API_PRODUCE = 0;
const API_METADATA = 3;
const API_VERSIONS = 18;
const UNSUPPORTED_VERSION = 35;

class Reader {
  offset = 0;
  constructor(private readonly buf: Buffer) {}
  int8(): number {
    return this.buf.readInt8((this.offset += 1) - 1);
  }
  int16(): number {
    return this.buf.readInt16BE((this.offset += 2) - 2);
  }
  int32(): number {
    return this.buf.readInt32BE((this.offset += 4) - 4);
  }
  int64(): bigint {
    return this.buf.readBigInt64BE((this.offset += 8) - 8);
  }
  string(): string | null {
    const n = this.int16();
    if (n < 0) return null;
    return this.buf.toString('utf8', this.offset, (this.offset += n));
  }
  bytes(n: number): Buffer {
    return this.buf.subarray(this.offset, (this.offset += n));
  }
  array<T>(item: () => T): T[] {
    const n = this.int32();
    return Array.from({ length: Math.max(0, n) }, item);
  }
  /** Zig-zag varint (record fields). */
  varint(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = this.buf.readUInt8(this.offset++);
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    return (value >>> 1) ^ -(value & 1);
  }
  /** Zig-zag varlong, only its magnitude is skipped/needed here. */
  varlong(): bigint {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const b = BigInt(this.buf.readUInt8(this.offset++));
      value |= (b & 0x7fn) << shift;
      if ((b & 0x80n) === 0n) break;
      shift += 7n;
    }
    return (value >> 1n) ^ -(value & 1n);
  }
  varBytes(): Buffer | null {
    const n = this.varint();
    return n < 0 ? null : this.bytes(n);
  }
  get done(): boolean {
    return this.offset >= this.buf.length;
  }
}

class Writer {
  private readonly parts: Buffer[] = [];
  int16(v: number): this {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    this.parts.push(b);
    return this;
  }
  int32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    this.parts.push(b);
    return this;
  }
  int64(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    this.parts.push(b);
    return this;
  }
  string(s: string): this {
    const b = Buffer.from(s, 'utf8');
    this.int16(b.length);
    this.parts.push(b);
    return this;
  }
  array<T>(items: readonly T[], write: (w: this, item: T) => void): this {
    this.int32(items.length);
    for (const item of items) write(this, item);
    return this;
  }
  buffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** Records of a RecordBatch (magic 2) sequence. */
function decodeRecordBatches(
  set: Buffer,
): Array<{ key: string | null; value: string; headers: Record<string, string> }> {
  const out: Array<{ key: string | null; value: string; headers: Record<string, string> }> = [];
  const r = new Reader(set);
  while (!r.done) {
    r.int64(); // base offset
    const length = r.int32();
    const end = r.offset + length;
    r.int32(); // partition leader epoch
    const magic = r.int8();
    if (magic !== 2) throw new Error(`record batch magic ${magic} not supported by the fake`);
    r.int32(); // crc
    const attributes = r.int16();
    if ((attributes & 0x07) !== 0) throw new Error('compressed batches not supported by the fake');
    r.int32(); // last offset delta
    r.int64(); // first timestamp
    r.int64(); // max timestamp
    r.int64(); // producer id
    r.int16(); // producer epoch
    r.int32(); // base sequence
    const count = r.int32();
    for (let i = 0; i < count; i++) {
      r.varint(); // record length
      r.int8(); // attributes
      r.varlong(); // timestamp delta
      r.varint(); // offset delta
      const key = r.varBytes();
      const value = r.varBytes();
      const headers: Record<string, string> = {};
      const nHeaders = r.varint();
      for (let h = 0; h < nHeaders; h++) {
        const hk = r.varBytes();
        const hv = r.varBytes();
        headers[hk?.toString('utf8') ?? ''] = hv?.toString('utf8') ?? '';
      }
      out.push({
        key: key?.toString('utf8') ?? null,
        value: value?.toString('utf8') ?? '',
        headers,
      });
    }
    r.offset = end;
  }
  return out;
}

export async function startFakeKafka(partitions = 3): Promise<FakeKafka> {
  const records: KafkaRecord[] = [];
  const sockets = new Set<Socket>();
  let port = 0;
  const offsets = new Map<string, bigint>();

  /** The response body, or null for a Produce with acks=0 (no response is sent). */
  const answer = (apiKey: number, version: number, body: Reader): Buffer | null => {
    if (apiKey === API_VERSIONS) {
      const w = new Writer().int16(0);
      w.array(
        [
          [API_PRODUCE, 3, 3],
          [API_METADATA, 0, 0],
          [API_VERSIONS, 0, 2],
        ],
        (x, [k, min, max]) =>
          x
            .int16(k as number)
            .int16(min as number)
            .int16(max as number),
      );
      if (version >= 1) w.int32(0);
      return w.buffer();
    }
    if (apiKey === API_METADATA) {
      const topics = body.array(() => body.string() ?? '');
      return new Writer()
        .array([0], (w) => w.int32(0).string('127.0.0.1').int32(port))
        .array(topics, (w, topic) =>
          w
            .int16(0)
            .string(topic)
            .array(
              Array.from({ length: partitions }, (_, i) => i),
              (x, p) =>
                x
                  .int16(0)
                  .int32(p)
                  .int32(0)
                  .array([0], (y) => y.int32(0))
                  .array([0], (y) => y.int32(0)),
            ),
        )
        .buffer();
    }
    if (apiKey === API_PRODUCE) {
      body.string(); // transactional id
      const acks = body.int16();
      body.int32(); // timeout
      const topics = body.array(() => {
        const topic = body.string() ?? '';
        const parts = body.array(() => {
          const partition = body.int32();
          const size = body.int32();
          const set = body.bytes(size);
          const base = offsets.get(`${topic}/${partition}`) ?? 0n;
          const decoded = decodeRecordBatches(set);
          for (const d of decoded) records.push({ topic, partition, acks, ...d });
          offsets.set(`${topic}/${partition}`, base + BigInt(decoded.length));
          return { partition, base };
        });
        return { topic, parts };
      });
      if (acks === 0) return null;
      return new Writer()
        .array(topics, (w, t) =>
          w
            .string(t.topic)
            .array(t.parts, (x, p) => x.int32(p.partition).int16(0).int64(p.base).int64(-1n)),
        )
        .int32(0)
        .buffer();
    }
    return new Writer().int16(UNSUPPORTED_VERSION).buffer();
  };

  const onConnection = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const frame = new Reader(pending.subarray(4, 4 + size));
        pending = pending.subarray(4 + size);
        const apiKey = frame.int16();
        const version = frame.int16();
        const correlationId = frame.int32();
        frame.string(); // client id
        let payload: Buffer | null;
        try {
          payload = answer(apiKey, version, frame);
        } catch {
          socket.destroy();
          return;
        }
        if (payload === null) continue;
        const header = Buffer.alloc(8);
        header.writeInt32BE(4 + payload.length, 0);
        header.writeInt32BE(correlationId, 4);
        socket.write(Buffer.concat([header, payload]));
      }
    });
  };

  let server: Server = createServer(onConnection);
  const listen = (p: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        const a = server.address();
        port = typeof a === 'object' && a ? a.port : 0;
        resolve();
      });
    });
  await listen(0);

  return {
    get address() {
      return `127.0.0.1:${port}`;
    },
    records,
    async waitFor(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (records.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} records, got ${records.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
    async start() {
      server = createServer(onConnection);
      await listen(port);
    },
  };
}
