import { All, Controller, Get, Req, Res, type Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ChannelsService } from 'src/modules/channels/channels.service';
import { Public } from 'src/platform/auth/public.decorator';
import { ApiError } from 'src/platform/errors/api-error';
import { type ConnectorRoute } from './connector';

/**
 * The controller of one messaging connector at `/webhooks/<name>/`: the health route and the
 * connector's routes (`webhook`, Telegram's `set_webhook`), any method, handed to the connector;
 * a method or route it does not serve is a 404 failure body. Webhooks need no token, as in Rasa:
 * the connector checks the platform's signature.
 */
export function connectorController(name: string): Type {
  @Public()
  @Controller(`webhooks/${name}`)
  class ConnectorController {
    constructor(readonly channels: ChannelsService) {}

    @Get()
    health(): Promise<unknown> {
      return this.channels.health(name);
    }

    @All('webhook')
    async webhook(@Req() req: Request, @Res() res: Response): Promise<void> {
      await this.route('webhook', req, res);
    }

    @All('set_webhook')
    async setWebhook(@Req() req: Request, @Res() res: Response): Promise<void> {
      await this.route('set_webhook', req, res);
    }

    private async route(route: ConnectorRoute, req: Request, res: Response): Promise<void> {
      const served = await this.channels.connector(name)?.handle(route, req, res);
      if (served !== true) {
        throw new ApiError('HTTP.NOT_FOUND', `Requested URL ${req.path} not found.`, {
          channel: name,
        });
      }
    }
  }

  Object.defineProperty(ConnectorController, 'name', { value: `ChannelConnector[${name}]` });
  return ConnectorController;
}
