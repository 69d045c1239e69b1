import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HttpDrain } from 'src/platform/http/http-drain';
import { HealthController } from './health.controller';
import { ReadinessChecks } from './readiness-checks';

/**
 * `/health/live` and `/health/ready`. Global: modules inject ReadinessChecks to add theirs, and
 * the shutdown (HttpDrain) is the one the readiness route reports.
 */
@Global()
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [HttpDrain, ReadinessChecks],
  exports: [HttpDrain, ReadinessChecks],
})
export class HealthModule {}
