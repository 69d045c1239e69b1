import { Controller, Get, HttpCode, Post, Req, Res, type Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from 'src/platform/auth/public.decorator';
import { ChannelsService } from './channels.service';

/**
 * A controller serving one configured channel at `/webhooks/<name>/`: the health route and,
 * unless the channel is health-only (socketio), `POST /webhooks/<name>/webhook`. One class per
 * channel, so only configured names have routes and other modules' webhooks (`rest`) are
 * never shadowed. Webhooks need no token, as in Rasa.
 */
export function webhookController(name: string, withWebhook: boolean): Type {
  @Public()
  @Controller(`webhooks/${name}`)
  class HealthOnlyController {
    constructor(readonly channels: ChannelsService) {}

    @Get()
    health(): Promise<unknown> {
      return this.channels.health(name);
    }
  }

  @Public()
  @Controller(`webhooks/${name}`)
  class WebhookController extends HealthOnlyController {
    @Post('webhook')
    @HttpCode(200)
    async webhook(@Req() req: Request, @Res() res: Response): Promise<void> {
      await this.channels.webhook(name, req, res);
    }
  }

  const cls = withWebhook ? WebhookController : HealthOnlyController;
  Object.defineProperty(cls, 'name', { value: `ChannelWebhook[${name}]` });
  return cls;
}
