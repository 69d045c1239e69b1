import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { RestAuthGuard } from './rest-auth.guard';
import { RestJwtStrategy } from './rest-jwt.strategy';

/** REST authentication (token and JWT), applied to every route not marked @Public(). */
@Module({
  imports: [PassportModule],
  providers: [RestJwtStrategy, { provide: APP_GUARD, useClass: RestAuthGuard }],
})
export class AuthModule {}
