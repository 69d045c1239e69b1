import { Controller, Get, Inject } from '@nestjs/common';
import { Public } from 'src/platform/auth/public.decorator';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { licenseRecord, type LicenseRecord } from './license';

/** `GET /license`: open, served with or without `--enable-api` (as Rasa Pro does). */
@Controller('license')
export class LicenseController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  @Public()
  license(): LicenseRecord {
    return licenseRecord(this.config.license);
  }
}
