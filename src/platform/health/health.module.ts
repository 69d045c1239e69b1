import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HttpDrain } from 'src/platform/http/http-drain';
import { HealthController } from './health.controller';

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [HttpDrain] })
export class HealthModule {}
