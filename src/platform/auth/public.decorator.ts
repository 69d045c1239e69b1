import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'parley:isPublic';

/** Marks a route (or controller) open: no token or JWT is checked (health, root, webhooks). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
