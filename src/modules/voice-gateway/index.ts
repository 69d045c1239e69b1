// The voice gateway module's public surface: other modules import from here only.
export { VoiceGatewayModule } from './voice-gateway.module';
