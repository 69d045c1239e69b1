/** The idempotency module's public surface: import from 'src/modules/idempotency'. */
export {
  IdempotencyStore,
  type Claim,
  type KeyScope,
  type StoredAnswer,
} from './idempotency-store';
export { IdempotencyModule } from './idempotency.module';
export {
  IN_FLIGHT_LEASE_MS,
  IdempotentIngress,
  MAX_KEY_LENGTH,
  fingerprintOf,
  idempotencyKeyOf,
  messageIdOf,
  type IngressScope,
} from './idempotent-ingress';
