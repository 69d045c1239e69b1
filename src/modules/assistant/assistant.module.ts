import { Global, Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { AssistantSource, Domain, readDomainPath } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { AssistantRegistry } from './assistant.registry';

/** Provides the AssistantRegistry everywhere; loads `--domain` at start when given. */
@Global()
@Module({
  providers: [AssistantRegistry, { provide: AssistantSource, useExisting: AssistantRegistry }],
  exports: [AssistantRegistry, AssistantSource],
})
export class AssistantModule implements OnModuleInit {
  private readonly logger = new Logger(AssistantModule.name);

  constructor(
    private readonly registry: AssistantRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    const file = this.config.files.domain;
    if (file === null) return;
    // A domain directory's YAML files are merged into one domain, as Rasa does.
    const { text } = await readDomainPath(file);
    const domain = Domain.fromYaml(text, basename(file));
    const modelId = createHash('sha256').update(text).digest('hex').slice(0, 32);
    this.registry.load({ domain, modelId, modelFile: null, assistantId: null });
    this.logger.log({ domain: file, modelId }, 'domain loaded (no trained model)');
  }
}
