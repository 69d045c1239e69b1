import { DynamicModule, Module } from '@nestjs/common';
import { ModelModule } from 'src/modules/model/model.module';
import { type AppConfig } from 'src/platform/config/app-config';
import { EvaluateController } from './evaluate.controller';
import { FlowsController } from './flows.controller';
import { LicenseController } from './license.controller';
import { DomainController, ModelAdminController } from './model-admin.controller';
import { ModelAdminService } from './model-admin.service';
import { ModelArchiveController } from './model-archive.controller';
import { ModelArchiveServer } from './model-archive.server';
import { ModelController } from './model.controller';
import { ModelService } from './model.service';
import { TrainController } from './train.controller';

/**
 * The model routes, on ModelModule's services: parse, train, evaluate (`POST /model/test/intents`),
 * replace/unload (`PUT`/`DELETE /model`), `GET /domain`, `GET /flows`, the open `GET /license`, and with
 * `PARLEY_SERVE_MODELS=true` the model-server route `GET /models/<name>`. A module of its own
 * so that the app module places these routes: Nest registers routes module by module in the
 * order it first meets them, and ModelModule is met early (the dialogue module imports it).
 */
@Module({})
export class ModelHttpModule {
  static forRoot(config: AppConfig): DynamicModule {
    const api = config.http.enableApi;
    return {
      module: ModelHttpModule,
      imports: [ModelModule],
      controllers: api
        ? [
            ModelController,
            ModelAdminController,
            DomainController,
            FlowsController,
            LicenseController,
            EvaluateController,
            TrainController,
            ...(config.serveModels ? [ModelArchiveController] : []),
          ]
        : [LicenseController],
      providers: [ModelService, ModelAdminService, ModelArchiveServer],
    };
  }
}
