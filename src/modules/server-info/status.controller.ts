import { Controller, Get } from '@nestjs/common';
import { AssistantSource } from 'src/core';
import { TrainingJobs } from 'src/modules/model';

/** `GET /status` (API only): the loaded model, 409 without one. */
@Controller('status')
export class StatusController {
  constructor(
    private readonly assistants: AssistantSource,
    private readonly jobs: TrainingJobs,
  ) {}

  @Get()
  status(): { model_file: string | null; model_id: string; num_active_training_jobs: number } {
    const assistant = this.assistants.require();
    return {
      model_file: assistant.modelFile,
      model_id: assistant.modelId,
      num_active_training_jobs: this.jobs.active(),
    };
  }
}
