import { DynamicModule, Module, OnApplicationBootstrap } from '@nestjs/common';
import { type AppConfig } from 'src/platform/config/app-config';
import { EvaluateController } from './evaluate.controller';
import { LicenseController } from './license.controller';
import { DomainController, ModelAdminController } from './model-admin.controller';
import { ModelAdminService } from './model-admin.service';
import { ModelLoader } from './model-loader';
import { ModelController } from './model.controller';
import { ModelService } from './model.service';
import { TrainController } from './train.controller';

/**
 * The trained model: loads `--model` at start (after the `--domain` fallback, which a model
 * replaces) and serves the model routes: parse, replace/unload (`PUT`/`DELETE /model`),
 * `GET /domain`, and the open `GET /license`.
 */
@Module({})
export class ModelModule implements OnApplicationBootstrap {
  constructor(private readonly loader: ModelLoader) {}

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
      providers: [ModelService, ModelLoader, ModelAdminService],
      exports: [ModelService, ModelLoader, ModelAdminService],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.loader.loadAtStart();
  }
}
