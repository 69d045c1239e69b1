import { All, Controller, Get, Req, Res, type Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ChannelsService } from 'src/modules/channels/channels.service';
import { Public } from 'src/platform/auth/public.decorator';
import { ApiError } from 'src/platform/errors/api-error';

/**
 * The controller of one messaging connector at `/webhooks/<name>/`: the health route and the
 * connector's routes (its definition's, as Express paths), any method, handed to the connector
 * with the path below `/webhooks/<name>/` (`webhook`, `set_webhook`, `webhook/c1/activities`
 * …); a method or route it does not serve is a 404 failure body. Webhooks need no token, as in
 * Rasa: the connector checks the platform's signature.
 */
export function connectorController(name: string, routes: readonly string[]): Type {
  const prefix = `/webhooks/${name}/`;

  @Public()
  @Controller(`webhooks/${name}`)
  class ConnectorController {
    constructor(readonly channels: ChannelsService) {}

    @Get()
    health(): Promise<unknown> {
      return this.channels.health(name);
    }

    @All([...routes])
    async route(@Req() req: Request, @Res() res: Response): Promise<void> {
      const route = req.path.startsWith(prefix)
        ? req.path.slice(prefix.length).replace(/\/+$/, '')
        : '';
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
