import {
  burst,
  describeWithLockStore,
  REDIS_LOCKS,
  startReplicas,
  type Replicas,
} from 'test/utils/replicas';
import { startRoundRobinProxy } from 'test/utils/round-robin-proxy';

/**
 * Multi-instance stress (scale-out A.2): 50 conversations × 40 concurrent messages, all sent at
 * once through a round-robin proxy over 2 and over 3 `parley run` replicas sharing one
 * PostgreSQL and the Redis lock store, ten runs in a row each. Every run: every message answered
 * 200 with its own turn's reply, every conversation stored whole — each message once, each
 * followed by its own turn, contiguous `seq`, turns in the order they ran. The shorter burst
 * (4 messages per conversation) runs with every lock store in test/e2e/multi-instance.e2e-spec.ts.
 */

/** `STRESS_RUNS` runs fewer (or more) in a row, e.g. for a quick look on a busy machine. */
const RUNS = Number(process.env.STRESS_RUNS ?? 10);
const CONVERSATIONS = 50;
const MESSAGES = 40;
/**
 * Requests open at once, spread over every conversation (8 each on average): the test's own
 * client and proxy share one process, and 2,000 connections opened at once to it time out at
 * connect on a busy machine before Parley sees them.
 */
const IN_FLIGHT = 400;

describeWithLockStore(
  'multi-instance stress (Redis concurrent_redis)',
  REDIS_LOCKS,
  (lockEndpoints) => {
    // 2 × 10 runs of 2,000 turns on a shared 2-core machine: a hang guard, no timing.
    jest.setTimeout(900_000);
    let replicas: Replicas;

    beforeAll(async () => {
      replicas = await startReplicas({
        count: 3,
        lockEndpoints: lockEndpoints(),
        // 40 messages queue for each conversation: on a busy machine the last may wait longer
        // than the default 60 s for the 39 turns ahead. The proof is about what is stored.
        env: { ...REDIS_LOCKS.env, LOCK_TIMEOUT_MS: '300000' },
      });
    });

    afterAll(async () => {
      await replicas?.stop();
    });

    it.each([2, 3])(
      `stores ${CONVERSATIONS} conversations × ${MESSAGES} concurrent messages whole over %i replicas, ${RUNS} runs in a row`,
      async (n) => {
        const proxy = await startRoundRobinProxy(replicas.instances.slice(0, n).map((i) => i.base));
        try {
          for (let run = 1; run <= RUNS; run++) {
            // The run number is in every conversation id: a failure names its run.
            const started = Date.now();
            await burst(
              replicas.db,
              proxy.url,
              `stress${n}-run${run}`,
              CONVERSATIONS,
              MESSAGES,
              IN_FLIGHT,
            );
            process.stdout.write(
              `stress over ${n} replicas, run ${run}: ${Date.now() - started} ms\n`,
            );
          }
          // Every replica took its share of the 20,000 messages.
          expect(proxy.forwarded.every((count) => count > 0)).toBe(true);
          expect(proxy.forwarded.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(
            RUNS * CONVERSATIONS * MESSAGES,
          );
        } finally {
          await proxy.close();
        }
      },
    );
  },
);
