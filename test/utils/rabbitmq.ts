import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';

/** The RabbitMQ of the tests (AMQP_URL, or the local default). */
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

let reachable: Promise<boolean> | null = null;

/**
 * Whether RabbitMQ answers; when it does not, prints one line saying which tests are skipped
 * (never a failure on a machine without RabbitMQ).
 */
export function rabbitReachable(what: string): Promise<boolean> {
  reachable ??= connect(AMQP_URL, { timeout: 3_000 })
    .then(async (c) => {
      await c.close();
      return true;
    })
    .catch(() => false);
  return reachable.then((ok) => {
    if (!ok) {
      const safe = AMQP_URL.replace(/\/\/[^@]*@/, '//');
      process.stdout.write(`RabbitMQ not reachable at ${safe}: ${what} tests skipped\n`);
    }
    return ok;
  });
}

/** Names no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A consumer that keeps every message of a queue it declares (durable, like the broker's). */
export interface QueueConsumer {
  readonly messages: ConsumeMessage[];
  /** The bodies parsed. */
  bodies(): Array<Record<string, unknown>>;
  /** Resolves once `n` messages arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function consumeQueue(queue: string, exchange?: string): Promise<QueueConsumer> {
  const model: ChannelModel = await connect(AMQP_URL);
  const channel = await model.createChannel();
  await channel.assertQueue(queue, { durable: true });
  if (exchange !== undefined) {
    await channel.assertExchange(exchange, 'fanout', { durable: false });
    await channel.bindQueue(queue, exchange, '');
  }
  const messages: ConsumeMessage[] = [];
  const waiters: Array<() => void> = [];
  await channel.consume(
    queue,
    (m) => {
      if (m === null) return;
      messages.push(m);
      for (const w of waiters.splice(0)) w();
    },
    { noAck: true },
  );
  return {
    messages,
    bodies: () =>
      messages.map((m) => JSON.parse(m.content.toString('utf8')) as Record<string, unknown>),
    async waitFor(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(`expected ${n} messages on ${queue}, got ${messages.length}`);
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 200));
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
    async close() {
      await channel.deleteQueue(queue).catch(() => undefined);
      if (exchange !== undefined) await channel.deleteExchange(exchange).catch(() => undefined);
      await model.close().catch(() => undefined);
    },
  };
}

/** Per conversation: the seqs of the distinct event_ids, in arrival order. */
export function seqsByConversation(
  bodies: ReadonlyArray<Record<string, unknown>>,
): Map<string, number[]> {
  const seen = new Set<string>();
  const out = new Map<string, number[]>();
  for (const b of bodies) {
    const meta = b.metadata as { event_id: string; seq: number };
    if (seen.has(meta.event_id)) continue;
    seen.add(meta.event_id);
    const list = out.get(b.sender_id as string) ?? [];
    list.push(meta.seq);
    out.set(b.sender_id as string, list);
  }
  return out;
}
