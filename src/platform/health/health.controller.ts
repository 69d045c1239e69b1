import { Controller, Get } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { Public } from 'src/platform/auth/public.decorator';
import { HttpDrain } from 'src/platform/http/http-drain';

/**
 * Liveness (the process answers) and readiness (the database answers and the server is not
 * shutting down) for operators.
 */
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly drain: HttpDrain,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.db.pingCheck('database', { timeout: 3000 }),
      () => {
        const server = this.indicators.check('server');
        return this.drain.draining ? server.down({ shuttingDown: true }) : server.up();
      },
    ]);
  }
}
