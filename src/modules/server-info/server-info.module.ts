import { DynamicModule, Module } from '@nestjs/common';
import { ModelModule } from 'src/modules/model';
import { type AppConfig } from 'src/platform/config/app-config';
import { ServerInfoController } from './server-info.controller';
import { StatusController } from './status.controller';

/** `GET /`, `GET /version` always; `GET /status` with the API enabled. */
@Module({})
export class ServerInfoModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ServerInfoModule,
      imports: [ModelModule],
      controllers: config.http.enableApi
        ? [ServerInfoController, StatusController]
        : [ServerInfoController],
    };
  }
}
