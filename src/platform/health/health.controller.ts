import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from 'src/platform/auth/public.decorator';
import { ApiError } from 'src/platform/errors/api-error';
import { HttpDrain } from 'src/platform/http/http-drain';
import { ReadinessChecks } from './readiness-checks';

/** Time the database ping may take before the instance counts as not ready. */
const DATABASE_PING_TIMEOUT_MS = 3000;

/**
 * Liveness (the process answers; never a dependency, so a database blip restarts no pod) and
 * readiness for operators: 503 with every check's status while the server shuts down, the
 * database does not answer, or a critical registered check (lock store, model) fails;
 * non-critical checks (a broker) report `warning` and keep the instance ready.
 */
@Controller('health')
@Public()
@SkipThrottle()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly drain: HttpDrain,
    private readonly checks: ReadinessChecks,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** 200 with every check, or 503 in the failure body with every check's status in `details`. */
  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.checkReadiness();
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const result = error.getResponse() as HealthCheckResult;
      const failing = Object.keys(result.error ?? {});
      throw new ApiError(
        'HEALTH.NOT_READY',
        `Not ready: ${failing.join(', ') || 'a check failed'}.`,
        result.details,
      );
    }
  }

  private checkReadiness(): Promise<HealthCheckResult> {
    return this.health.check([
      () => {
        const server = this.indicators.check('server');
        return this.drain.draining ? server.down({ shuttingDown: true }) : server.up();
      },
      () => this.db.pingCheck('database', { timeout: DATABASE_PING_TIMEOUT_MS }),
      ...this.checks.names().map((name) => () => this.registered(name)),
    ]);
  }

  private async registered(name: string): Promise<HealthIndicatorResult> {
    const outcome = await this.checks.run(name);
    const indicator = this.indicators.check(name);
    if (outcome.up) return indicator.up(outcome.details);
    if (!outcome.critical) return indicator.up({ ...outcome.details, warning: true });
    return indicator.down(outcome.details);
  }
}
