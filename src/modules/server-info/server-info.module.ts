import { DynamicModule, Module } from '@nestjs/common';
import { type AppConfig } from 'src/platform/config/app-config';
import { ServerInfoController } from './server-info.controller';
import { StatusController } from './status.controller';
import { TrainingJobs } from './training-jobs';

/** `GET /`, `GET /version` always; `GET /status` with the API enabled. */
@Module({})
export class ServerInfoModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ServerInfoModule,
      controllers: config.http.enableApi
        ? [ServerInfoController, StatusController]
        : [ServerInfoController],
      providers: [TrainingJobs],
      exports: [TrainingJobs],
    };
  }
}
