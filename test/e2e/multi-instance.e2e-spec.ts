import { type CliServer } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';
import {
  burst,
  describeWithLockStore,
  failures,
  message,
  post,
  POSTGRES_LOCKS,
  REDIS_LOCKS,
  startReplicas,
  storedEvents,
  turnsOf,
  type LockStoreCase,
  type Replicas,
} from 'test/utils/replicas';
import { startRoundRobinProxy } from 'test/utils/round-robin-proxy';

/**
 * The multi-instance proof: real `parley run` processes on one PostgreSQL behind a round-robin
 * proxy, as replicas run behind a load balancer. Any replica serves any conversation: whatever
 * the interleaving of requests over replicas, each conversation's tracker holds every answered
 * message exactly once, each followed by its own turn, in `seq` order — also when a replica is
 * killed outright mid-load.
 *
 * The bot (test/fixtures/echobot) answers every message through the custom action
 * `action_echo` with "echo <the message>", so each bot reply names the message it belongs to
 * (test/utils/replicas.ts). The longer runs — lease expiry, 50 × 40 stress ten times in a row —
 * are in the fault suite (test/faults/).
 */

/** The lock stores the proof runs with; the Redis one needs a test Redis (else one line, skipped). */
const LOCK_STORES: readonly LockStoreCase[] = [POSTGRES_LOCKS, REDIS_LOCKS];

for (const store of LOCK_STORES) {
  describeWithLockStore(
    `several parley run processes on one database (${store.name})`,
    store,
    (lockEndpoints) => {
      // Starting three servers and ~700 turns on a shared 2-core machine: a hang guard, no timing.
      jest.setTimeout(180_000);
      let replicas: Replicas;
      const instances = (): CliServer[] => replicas.instances;

      beforeAll(async () => {
        replicas = await startReplicas({
          count: 3,
          lockEndpoints: lockEndpoints(),
          env: store.env,
        });
      });

      afterAll(async () => {
        await replicas?.stop();
      });

      it.each([2, 3])(
        'serves 50 conversations × 4 concurrent messages over %i replicas: all answered, each stored once with its own turn',
        async (n) => {
          const proxy = await startRoundRobinProxy(
            instances()
              .slice(0, n)
              .map((i) => i.base),
          );
          try {
            await burst(replicas.db, proxy.url, `rr${n}`, 50, 4);
            // Every replica took its share.
            expect(proxy.forwarded.every((count) => count > 0)).toBe(true);
          } finally {
            await proxy.close();
          }
        },
      );

      it('runs 20 concurrent messages to one conversation over 2 replicas one turn at a time', async () => {
        const proxy = await startRoundRobinProxy(
          instances()
            .slice(0, 2)
            .map((i) => i.base),
        );
        replicas.actions.delayMs = 100;
        replicas.actions.resetConcurrency();
        const callsBefore = replicas.actions.calls;
        try {
          const id = uniqueId('one');
          const texts = Array.from({ length: 20 }, (_, m) => message(`m${m}`));
          const sent = await Promise.all(texts.map((text) => post(proxy.url, id, text)));
          expect(failures(sent)).toEqual([]);
          for (const s of sent) {
            expect(s.replies).toEqual([{ recipient_id: id, text: `echo ${s.text}` }]);
          }
          expect(proxy.forwarded).toEqual([10, 10]);
          const events = await storedEvents(replicas.db, proxy.url, id);
          expect(events.filter((e) => e.event === 'user')).toHaveLength(20);
          expect(turnsOf(id, events).sort()).toEqual([...texts].sort());
          // One turn at a time: the lock held, never two actions of the conversation at once, and
          // each turn ran once (never redone on a stale tracker after the other replica's turn).
          expect(replicas.actions.maxConcurrent).toBe(1);
          expect(replicas.actions.calls - callsBefore).toBe(20);
        } finally {
          replicas.actions.delayMs = 0;
          await proxy.close();
        }
      });

      it('keeps every answered message and no partial turn when a replica is killed (SIGKILL) mid-load', async () => {
        const [survivor, victim] = instances().slice(1, 3) as [CliServer, CliServer];
        const proxy = await startRoundRobinProxy([survivor.base, victim.base]);
        replicas.actions.delayMs = 20;
        try {
          const ids = Array.from({ length: 30 }, () => uniqueId('kill'));
          let answered = 0;
          let killed = false;
          const sent = await Promise.all(
            ids.flatMap((id, c) =>
              Array.from({ length: 4 }, async (_, m) => {
                const s = await post(proxy.url, id, message(`${c}-${m}`));
                if (s.status === 200 && ++answered === 30 && !killed) {
                  killed = true;
                  victim.kill('SIGKILL');
                }
                return s;
              }),
            ),
          );
          expect(killed).toBe(true);
          await victim.exited;
          const acknowledged = sent.filter((s) => s.status === 200);
          // Some requests went to the victim before it died, and most were answered.
          expect(proxy.forwarded[1]).toBeGreaterThan(0);
          expect(acknowledged.length).toBeGreaterThanOrEqual(30);

          const trackers = await Promise.all(
            ids.map((id) => storedEvents(replicas.db, survivor.base, id)),
          );
          for (const [c, id] of ids.entries()) {
            const texts = turnsOf(id, trackers[c] ?? []);
            // Each stored message once; every acknowledged one among them.
            expect(new Set(texts).size).toBe(texts.length);
            const mine = acknowledged.filter((s) => s.sender === id).map((s) => s.text);
            expect(mine.filter((text) => !texts.includes(text))).toEqual([]);
          }

          // The survivor keeps serving through the proxy (the dead replica refuses connections),
          // also the conversations the victim was working on.
          const after = await Promise.all(ids.map((id) => post(proxy.url, id, message('after'))));
          expect(failures(after)).toEqual([]);
          const afterwards = await Promise.all(
            ids.map((id) => storedEvents(replicas.db, survivor.base, id)),
          );
          for (const [c, id] of ids.entries()) {
            const texts = turnsOf(id, afterwards[c] ?? []);
            expect(texts[texts.length - 1]).toBe(message('after'));
          }
        } finally {
          replicas.actions.delayMs = 0;
          await proxy.close();
        }
      });
    },
  );
}
