import { Controller, Get, UseGuards } from '@nestjs/common';
import { type JsonObject } from 'src/core/events/event-base';
import { flowsToJson } from 'src/core/flows/flows-json';
import { ModelLoadedGuard } from 'src/modules/model/model-loaded.guard';
import { ServedModel } from 'src/modules/model/served-model';

/**
 * `GET /flows` (Rasa Pro): the served model's flows, the merged default patterns included, as
 * Rasa serialises them. A model without flows answers `[]` (Rasa's empty flows list). Auth runs
 * first (global guard); 409 without a model.
 */
@Controller('flows')
export class FlowsController {
  constructor(private readonly served: ServedModel) {}

  @Get()
  @UseGuards(ModelLoadedGuard)
  flows(): JsonObject[] {
    const flows = this.served.require().calm?.flows;
    return flows === undefined ? [] : flowsToJson(flows);
  }
}
