/** The rate limit module's public surface: import from 'src/modules/rate-limit'. */
export { RateLimitGuard, clientOf, conversationOf, isLimitedRoute } from './rate-limit.guard';
export { RateLimitModule } from './rate-limit.module';
