'use strict';
// A RabbitMQ consumer in its own process, for bench/broker.js: a queue bound to a fresh fanout
// exchange, counting (and parsing) what arrives. Downstream consumers of an event broker run
// apart from the assistant's clients; in the bench's own process its parsing would slow the load
// generator whenever the broker is on, and count against the broker.
//
// Forked with `<amqp url> <tag>`; sends { exchange, queue } once bound, then answers every
// message from its parent with its state: { count, first, last (ns, as strings), senders
// ([sender_id, messages] pairs) }.
const amqp = require('amqplib');

async function main() {
  const [url, tag] = process.argv.slice(2);
  const exchange = `parley-bench-${tag}-${Date.now().toString(36)}`;
  const queue = `${exchange}-q`;
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'fanout', { durable: false });
  await ch.assertQueue(queue, { durable: true });
  await ch.bindQueue(queue, exchange, '');
  let count = 0;
  let first = 0n;
  let last = 0n;
  const senders = new Map();
  await ch.prefetch(2000);
  await ch.consume(queue, (m) => {
    if (m === null) return;
    const now = process.hrtime.bigint();
    if (count === 0) first = now;
    last = now;
    count++;
    const body = JSON.parse(m.content.toString());
    senders.set(body.sender_id, (senders.get(body.sender_id) ?? 0) + 1);
    ch.ack(m);
  });
  process.on('message', async (request) => {
    if (request === 'close') {
      await ch.deleteQueue(queue).catch(() => undefined);
      await ch.deleteExchange(exchange).catch(() => undefined);
      await conn.close().catch(() => undefined);
      process.disconnect();
      return;
    }
    process.send({
      count,
      first: String(first),
      last: String(last),
      senders: [...senders],
    });
  });
  process.send({ exchange, queue });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
