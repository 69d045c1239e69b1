import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';

/** Payload of Rasa's REST JWTs: `{"user": {"username": "…", "role": "admin" | "user"}}`. */
export interface RestJwtPayload {
  user?: { username?: unknown; role?: unknown };
}

export const REST_JWT = 'rest-jwt';

/**
 * Verifies `Authorization: Bearer <jwt>` with `--jwt-secret` (an HMAC secret or a public key)
 * and exactly the algorithm of `--jwt-method`: `alg: none` and algorithm confusion are refused.
 */
@Injectable()
export class RestJwtStrategy extends PassportStrategy(Strategy, REST_JWT) {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: config.auth.jwtSecret ?? 'unused',
      algorithms: [config.auth.jwtMethod],
      ignoreExpiration: false,
    });
  }

  validate(payload: RestJwtPayload): RestJwtPayload {
    return payload;
  }
}
