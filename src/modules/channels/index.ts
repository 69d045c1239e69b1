// The channels module's only public file: what other modules (the app, the voice gateway) use.

export { VOICE_CONNECTOR_KEY } from './channel-config';
export { ChannelsModule } from './channels.module';
export { ChannelInput, type ChannelInputOptions, type InputLog } from './input/channel-input';
