import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { DialogueError } from 'src/core';
import { IS_PUBLIC } from 'src/platform/auth/public.decorator';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { conversationIdOf } from 'src/platform/http/conversation-id';
import { REST_JWT, type RestJwtPayload } from './rest-jwt.strategy';

/** Runs the JWT strategy without throwing: yields the payload, or null for a bad/missing token. */
class OptionalRestJwtGuard extends AuthGuard(REST_JWT) {
  override handleRequest<T>(_err: unknown, user: T): T {
    return user;
  }
}

/**
 * Rasa's REST authentication, in its order: a matching `?token=` wins; else a valid JWT whose
 * `user.role` is `admin` (everything) or `user` (only the conversation whose id equals
 * `user.username`); with neither configured everything is open; otherwise 401.
 */
@Injectable()
export class RestAuthGuard implements CanActivate {
  private readonly jwt = new OptionalRestJwtGuard();
  /** `@Public()` per route handler (metadata is fixed once the app is built). */
  private readonly publicRoutes = new WeakMap<object, boolean>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const handler = context.getHandler();
    let isPublic = this.publicRoutes.get(handler);
    if (isPublic === undefined) {
      isPublic =
        this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, context.getClass()]) ===
        true;
      this.publicRoutes.set(handler, isPublic);
    }
    if (isPublic) return true;
    const { token, jwtSecret } = this.config.auth;
    if (token === null && jwtSecret === null) return true;

    const req = context.switchToHttp().getRequest<Request & { user?: RestJwtPayload }>();
    const given: unknown = req.query.token;
    if (token !== null && typeof given === 'string' && timingSafeEqualStrings(given, token)) {
      return true;
    }

    if (jwtSecret !== null && typeof req.headers.authorization === 'string') {
      await this.jwt.canActivate(context);
      const payload = req.user;
      if (payload) {
        const role = payload.user?.role;
        if (role === 'admin') return true;
        const conversationId = conversationIdOf(req);
        if (
          role === 'user' &&
          conversationId !== null &&
          payload.user?.username === conversationId
        ) {
          return true;
        }
        throw new DialogueError('AUTH.NOT_AUTHORIZED', 'User has insufficient permissions.');
      }
    }
    throw new DialogueError('AUTH.NOT_AUTHENTICATED', 'User is not authenticated.');
  }
}

function timingSafeEqualStrings(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
