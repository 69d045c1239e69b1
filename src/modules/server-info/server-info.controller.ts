import { Controller, Get, Header, Inject } from '@nestjs/common';
import { Public } from 'src/platform/auth/public.decorator';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { MINIMUM_COMPATIBLE_VERSION } from 'src/platform/config/version';

/** `GET /` and `GET /version`: open, served with or without `--enable-api`. */
@Controller()
export class ServerInfoController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  hello(): string {
    return `Hello from Parley: ${this.config.version}`;
  }

  @Get('version')
  @Public()
  version(): { version: string; minimum_compatible_version: string } {
    return { version: this.config.version, minimum_compatible_version: MINIMUM_COMPATIBLE_VERSION };
  }
}
