import { type INestApplication } from '@nestjs/common';
import { type OperationsConfig } from 'src/platform/config/app-config';
import { HttpDrain } from 'src/platform/http/http-drain';

/** Time kept for the Nest hooks (outbox and broker flushes, pools) after the HTTP drain. */
const HOOKS_BUDGET_MS = 5000;

/**
 * SIGTERM, in order:
 * 1. readiness answers 503 at once (`/health/ready`), the listener still serves;
 * 2. after `shutdownDelayMs` (the load balancer's time to take the instance out), the listener
 *    closes, idle keep-alive connections are closed, and the requests in flight (turns) finish
 *    — at most the budget minus the delay and 5 s for the hooks;
 * 3. `app.close()`: Nest's `onModuleDestroy`, then `beforeApplicationShutdown` (no request runs
 *    any more, the database is still open: flush an outbox or a broker producer here), then
 *    `onApplicationShutdown` (pools closed).
 * The caller exits 0 after it, and enforces the whole budget with a timer.
 */
export async function gracefulShutdown(
  app: INestApplication,
  operations: OperationsConfig,
): Promise<void> {
  const drain = app.get(HttpDrain, { strict: false });
  drain.beginShutdown();
  if (operations.shutdownDelayMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, operations.shutdownDelayMs));
  }
  const drainBudget = Math.max(
    1000,
    operations.shutdownTimeoutMs - operations.shutdownDelayMs - HOOKS_BUDGET_MS,
  );
  await drain.drain(drainBudget);
  await app.close();
}
