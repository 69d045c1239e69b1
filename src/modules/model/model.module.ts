import { DynamicModule, Module, OnApplicationBootstrap } from '@nestjs/common';
import { type AppConfig } from 'src/platform/config/app-config';
import { ModelLoader } from './model-loader';
import { ModelController } from './model.controller';
import { ModelService } from './model.service';

/**
 * The trained model: loads `--model` at start (after the `--domain` fallback, which a model
 * replaces) and serves the model routes.
 */
@Module({})
export class ModelModule implements OnApplicationBootstrap {
  constructor(private readonly loader: ModelLoader) {}

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ModelModule,
      controllers: config.http.enableApi ? [ModelController] : [],
      providers: [ModelService, ModelLoader],
      exports: [ModelService, ModelLoader],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.loader.loadAtStart();
  }
}
