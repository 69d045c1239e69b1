import { DynamicModule, Module, OnApplicationBootstrap } from '@nestjs/common';
import { type AppConfig } from 'src/platform/config/app-config';
import { ModelArchiveController } from './model-archive.controller';
import { ModelArchiveServer } from './model-archive.server';
import { ModelServerPoller } from './model-server-poller';
import { ModelStore } from './model-store.service';

/**
 * Where models come from and go to: `--model` on disk, `--remote-storage` (S3 API, custom
 * persistors), the model server of endpoints.yml (polled), and uploads of trained models. With
 * `PARLEY_SERVE_MODELS=true` this server is itself a model server (`GET /models/<name>`).
 */
@Module({})
export class ModelStoreModule implements OnApplicationBootstrap {
  constructor(
    private readonly store: ModelStore,
    private readonly poller: ModelServerPoller,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ModelStoreModule,
      global: true,
      controllers: config.http.enableApi && config.serveModels ? [ModelArchiveController] : [],
      providers: [ModelStore, ModelServerPoller, ModelArchiveServer],
      exports: [ModelStore, ModelServerPoller],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.store.loadAtStart();
    await this.poller.startFromEndpoints();
  }
}
