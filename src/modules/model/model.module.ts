import {
  Inject,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { AssistantSource } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { ServedModel } from './served-model';
import { readDomainFile } from './sources/domain-file';
import { ModelServerPoller } from './sources/model-server-poller';
import { ModelStore } from './sources/model-store.service';
import { TrainingJobs } from './training/training-jobs';

/**
 * The served model and where it comes from: the AssistantSource port (ServedModel), the model
 * store (`--model` on disk, `--remote-storage`, uploads of trained models), the model-server
 * poller of endpoints.yml, and the training-job counter. Static and not global: a module that
 * reads the served model imports it, and all of them share this one instance. Its routes are
 * ModelHttpModule's (http/), registered where the app module lists that.
 *
 * At start: `--domain` is loaded when the modules initialise, then, at bootstrap, the model
 * (which replaces that domain) and the first pull of the model server.
 */
@Module({
  providers: [
    ServedModel,
    { provide: AssistantSource, useExisting: ServedModel },
    ModelStore,
    ModelServerPoller,
    TrainingJobs,
  ],
  exports: [ServedModel, AssistantSource, ModelStore, ModelServerPoller, TrainingJobs],
})
export class ModelModule implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(ModelModule.name);

  constructor(
    private readonly served: ServedModel,
    private readonly store: ModelStore,
    private readonly poller: ModelServerPoller,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    const file = this.config.files.domain;
    if (file === null) return;
    const assistant = await readDomainFile(file);
    this.served.load(assistant);
    this.logger.log(
      { domain: file, modelId: assistant.modelId },
      'domain loaded (no trained model)',
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.store.loadAtStart();
    await this.poller.startFromEndpoints();
  }
}
