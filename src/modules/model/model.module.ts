import { DynamicModule, Module } from '@nestjs/common';
import { type AppConfig } from 'src/platform/config/app-config';
import { EvaluateController } from './evaluate.controller';
import { LicenseController } from './license.controller';
import { DomainController, ModelAdminController } from './model-admin.controller';
import { ModelAdminService } from './model-admin.service';
import { ModelController } from './model.controller';
import { ModelService } from './model.service';
import { TrainController } from './train.controller';

/**
 * The trained model's routes (loading is ModelStoreModule's): the model routes: parse, replace/unload (`PUT`/`DELETE /model`),
 * `GET /domain`, and the open `GET /license`.
 */
@Module({})
export class ModelModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ModelModule,
      controllers: config.http.enableApi
        ? [
            ModelController,
            ModelAdminController,
            DomainController,
            LicenseController,
            EvaluateController,
            TrainController,
          ]
        : [LicenseController],
      providers: [ModelService, ModelAdminService],
      exports: [ModelService, ModelAdminService],
    };
  }
}
