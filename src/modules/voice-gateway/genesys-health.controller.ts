import { Controller, Get, Header } from '@nestjs/common';
import { Public } from 'src/platform/auth/public.decorator';
import { VoiceMetrics } from './voice-metrics';

/** `GET /webhooks/genesys/` (health, as Rasa answers it) and the voice metrics. */
@Controller('webhooks/genesys')
@Public()
export class GenesysHealthController {
  constructor(private readonly metrics: VoiceMetrics) {}

  @Get()
  health(): { status: string } {
    return { status: 'ok' };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  renderMetrics(): string {
    return this.metrics.render();
  }
}
