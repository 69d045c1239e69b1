import { uniqueId } from 'test/utils/create-test-app';
import {
  describeWithLockStore,
  message,
  post,
  REDIS_LOCKS,
  startReplicas,
  storedEvents,
  turnsOf,
  type Replicas,
  type Sent,
} from 'test/utils/replicas';
import { startRoundRobinProxy } from 'test/utils/round-robin-proxy';

/**
 * The lock is an optimisation, the database is the guard: with the lock's lease shorter than a
 * turn, a second replica starts a turn of the same conversation while the first still runs, and
 * only the per-conversation `seq` fence (the conditional append) keeps the tracker whole.
 *
 * Redis lock store with `TICKET_LOCK_LIFETIME=1` (a 1 s lease, not renewed, as Rasa's), the
 * custom action delayed 3 s, 20 concurrent messages to one conversation over 2 replicas. What the
 * product promises: every 200 answer's message is stored exactly once, followed by its own turn,
 * never interleaved with another; a message that is not answered 200 is answered with the failure
 * body and a 409 (it kept losing to other writers) or 503 (the lock was not free in time), and
 * nothing of it is stored. PostgreSQL advisory locks have no lease (held until the holder unlocks
 * or its connection ends), so this fault does not apply to them.
 */

/** The answers the product may give: 200 with the turn's reply, or a 409/503 failure body. */
function answeredOrRefused(s: Sent): boolean {
  if (s.status === 200) {
    return (
      JSON.stringify(s.replies) ===
      JSON.stringify([{ recipient_id: s.sender, text: `echo ${s.text}` }])
    );
  }
  if (s.status !== 409 && s.status !== 503) return false;
  const body = JSON.parse(s.failure ?? '{}') as {
    status?: string;
    code?: number;
    message?: string;
  };
  return body.status === 'failure' && body.code === s.status && typeof body.message === 'string';
}

describeWithLockStore(
  'a lock lease shorter than the turn (Redis, 1 s lease)',
  REDIS_LOCKS,
  (lockEndpoints) => {
    jest.setTimeout(240_000);
    let replicas: Replicas;

    beforeAll(async () => {
      replicas = await startReplicas({
        count: 2,
        lockEndpoints: lockEndpoints(),
        // A waiter gives up only after 2 min, so the fence decides, not the wait.
        env: { ...REDIS_LOCKS.env, TICKET_LOCK_LIFETIME: '1', LOCK_TIMEOUT_MS: '120000' },
      });
      replicas.actions.delayMs = 3000;
    });

    afterAll(async () => {
      await replicas?.stop();
    });

    it('stores every answered message of 20 concurrent ones once, each with its own turn; refuses the rest whole', async () => {
      const proxy = await startRoundRobinProxy(replicas.instances.map((i) => i.base));
      try {
        const id = uniqueId('lease');
        const texts = Array.from({ length: 20 }, (_, m) => message(`m${m}`));
        const sent = await Promise.all(texts.map((text) => post(proxy.url, id, text)));
        expect(proxy.forwarded).toEqual([10, 10]);
        // The lease ran out under a running turn: two turns of the conversation ran at once.
        expect(replicas.actions.maxConcurrent).toBeGreaterThanOrEqual(2);

        expect(sent.filter((s) => !answeredOrRefused(s)).map((s) => [s.status, s.failure])).toEqual(
          [],
        );
        const answered = sent.filter((s) => s.status === 200).map((s) => s.text);
        const refused = sent.filter((s) => s.status !== 200).map((s) => s.text);
        process.stdout.write(
          `lease expiry: ${answered.length} answered, ${refused.length} refused (${sent
            .filter((s) => s.status !== 200)
            .map((s) => s.status)
            .join(', ')}), ${replicas.actions.calls} action calls\n`,
        );
        expect(answered.length).toBeGreaterThan(0);

        const events = await storedEvents(replicas.db, proxy.url, id);
        const stored = turnsOf(id, events);
        // Exactly the answered messages, each once: no duplicate, no silent drop, no refused one.
        expect(events.filter((e) => e.event === 'user')).toHaveLength(answered.length);
        expect([...stored].sort()).toEqual([...answered].sort());
      } finally {
        await proxy.close();
      }
    });
  },
);
